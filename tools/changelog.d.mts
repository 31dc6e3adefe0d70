// Types for changelog.mjs (imported by tools/test/breaking-changes.test.ts).
import type { DiffResult } from './breaking-changes.mjs';
export declare function renderChangelog(result: DiffResult, options: { heading: string }): string;
export declare function main(argv?: string[], options?: { cwd?: string; log?: (line: string) => void }): Promise<number>;
