// Types for lint-redocly.mjs (imported by tools/test/lint-redocly.test.ts).
import type { NormalizedProblem } from '@redocly/openapi-core';
export declare function lintSpec(specEntry?: string): Promise<NormalizedProblem[]>;
export declare function formatProblem(problem: NormalizedProblem): string;
