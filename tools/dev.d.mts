// Types for dev.mjs (imported by tools/test/dev.test.ts).
export interface StepResult {
  ok: boolean;
  output: string;
  /** A build step: the emitted JavaScript files whose content changed (0: the running server's code is current). */
  changedJs?: number;
}
export interface Step {
  name: string;
  /** Started with the run, beside the other steps; its outcome is still taken in list order. */
  concurrent?: boolean;
  run: () => Promise<StepResult>;
}
export interface Steps {
  lint: Step[];
  generate: Step[];
  build: Step[];
  close?: () => Promise<unknown> | void;
}
export interface RunOutcome {
  ok: boolean;
  failed?: string;
  error?: string;
}
export declare const DEBOUNCE_MS: number;
export declare function firstError(output: string): string;
export declare function run(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<StepResult>;
export declare function defaultSteps(rootDir?: string): Steps;
export interface ServerStep extends Step {
  stop: () => Promise<void>;
  /** Serve the spec file as it is now without a restart; { ok: false, output: why } when it cannot. */
  reload?: () => Promise<StepResult>;
}
type LintAnswer = Promise<{ problems?: string[]; error?: string }>;
export declare function serverProcess(options?: { cwd?: string; script?: string; log?: (line: string) => void; readyLine?: RegExp; readyUrl?: string }): ServerStep;
export declare function lintWorker(options?: { rootDir?: string }): { lint: (specEntry: string) => { spectral: LintAnswer; redocly: LintAnswer }; close: () => Promise<number> };
export declare function createDevLoop(options: {
  steps: Steps;
  server?: ServerStep;
  log?: (line: string) => void;
  onRun?: (result: RunOutcome) => void;
}): { trigger: (kind: 'spec' | 'code') => void; close: () => Promise<void> };
export declare function watchTree(loop: { trigger: (kind: 'spec' | 'code') => void }, options?: { rootDir?: string }): () => void;
