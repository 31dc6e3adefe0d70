// Types for docs.mjs (imported by tools/test/docs.test.ts).
export declare function redocBundle(): string;
export declare function readGuides(dir?: string): { name: string; title: string; markdown: string }[];
export declare function buildDocs(options?: { out?: string; specFile?: string; guidesDir?: string; providersDir?: string }): string[];
export declare function localRedoc(source: string): string;
export declare const FAVICON: string;
export declare function readProviderPages(dir?: string): { name: string; title: string; markdown: string }[];
export declare function splitDescription(description?: string): { lead: string; protocol: string };
