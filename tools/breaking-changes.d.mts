// Types for breaking-changes.mjs (imported by tools/test/breaking-changes.test.ts).
export interface Change {
  kind: string;
  /** breaking: needs a new major; limit: an upper bound on a request input that had none, needs a new minor. */
  severity: 'breaking' | 'limit' | 'safe';
  /** Where: `METHOD /path [request body|<status> response body] /json/pointer`, a parameter, or `WEBHOOK <event> payload /pointer`. */
  where: string;
  message: string;
}
export interface DiffResult {
  breaking: Change[];
  limits: Change[];
  safe: Change[];
  oldVersion: string | undefined;
  newVersion: string | undefined;
}
export type Version = [number, number, number];
export declare function releasedSpecPath(specEntry: string): string;
export declare function bundleSpec(entry: string): Promise<Record<string, unknown>>;
export declare function loadSpec(file: string): Promise<Record<string, unknown>>;
export declare function diffSpecs(oldDoc: unknown, newDoc: unknown): DiffResult;
export declare function parseVersion(v: unknown): Version | undefined;
export declare function compareVersions(a: Version, b: Version): -1 | 0 | 1;
export declare function verdict(result: DiffResult): { fail: boolean; majorBumped: boolean; minorBumped: boolean; reasons: string[] };
export declare function changeId(change: Change): string;
export declare function extractSpecAtRef(ref: string, options?: { cwd?: string; specEntry?: string }): { dir: string; entry: string } | undefined;
export declare function parseArgs(argv: string[]): Record<string, string | boolean | undefined>;
export declare function resolveBase(
  args: Record<string, string | boolean | undefined>,
  cwd: string,
): Promise<{ oldEntry: string; newEntry: string; baseLabel: string; cleanup?: string } | { none: string }>;
export declare function compareWithBase(
  args: Record<string, string | boolean | undefined>,
  cwd: string,
): Promise<{ result: DiffResult; baseLabel: string } | { none: string }>;
export declare function main(argv?: string[], options?: { cwd?: string; log?: (line: string) => void }): Promise<number>;
