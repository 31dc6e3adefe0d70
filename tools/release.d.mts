// Types for release.mjs (imported by tools/test/breaking-changes.test.ts).
import type { DiffResult, Version } from './breaking-changes.mjs';
export type Level = 'none' | 'patch' | 'minor' | 'major';
export declare function bumpLevel(prev: Version, next: Version): Level;
export declare function nextVersion(prev: Version, level: Exclude<Level, 'none'>): string;
export declare function requiredBump(baselineDoc: unknown, workingDoc: unknown): { result: DiffResult; required: Level; reason: string };
export declare function release(options?: { specEntry?: string; dryRun?: boolean; log?: (...lines: string[]) => void; today?: Date }): Promise<number>;
