// Types for docs.mjs (imported by tools/test/docs.test.ts).
export declare function swaggerUiDist(): string;
export declare function buildDocs(options?: { out?: string; specFile?: string }): string[];
