// Types for breaking-changes.mjs (imported by tools/test/breaking-changes.test.ts).
export interface Change {
  kind: string;
  severity: 'breaking' | 'safe';
  /** Where: `METHOD /path [request body|<status> response body] /json/pointer`, or a parameter. */
  where: string;
  message: string;
}
export interface DiffResult {
  breaking: Change[];
  safe: Change[];
  oldVersion: string | undefined;
  newVersion: string | undefined;
}
export declare function bundleSpec(entry: string): Promise<Record<string, unknown>>;
export declare function diffSpecs(oldDoc: unknown, newDoc: unknown): DiffResult;
export declare function verdict(result: DiffResult): { fail: boolean; majorBumped: boolean };
export declare function changeId(change: Change): string;
export declare function defaultBase(cwd: string): { ref: string; label: string } | undefined;
export declare function extractSpecAtRef(ref: string, options?: { cwd?: string; specEntry?: string }): { dir: string; entry: string } | undefined;
export declare function main(argv?: string[], options?: { cwd?: string; log?: (line: string) => void }): Promise<number>;
