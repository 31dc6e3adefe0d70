// Types for test-summary.mjs (imported by test-run.mjs).
export declare const REPORT_FILES: string[];
export declare function summarize(options?: { wallSeconds?: number }): boolean;
