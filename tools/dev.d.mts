// Types for dev.mjs (imported by tools/test/dev.test.ts).
export interface StepResult {
  ok: boolean;
  output: string;
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
export declare function serverProcess(options?: { cwd?: string; script?: string; log?: (line: string) => void; readyLine?: RegExp; readyUrl?: string }): Step & { stop: () => Promise<void> };
export declare function lintWorker(options?: { rootDir?: string }): { lint: (specEntry: string) => Promise<{ spectral?: string[]; redocly?: string[]; error?: string }>; close: () => Promise<number> };
export declare function createDevLoop(options: {
  steps: Steps;
  server?: Step & { stop: () => Promise<void> };
  log?: (line: string) => void;
  onRun?: (result: RunOutcome) => void;
}): { trigger: (kind: 'spec' | 'code') => void; close: () => Promise<void> };
export declare function watchTree(loop: { trigger: (kind: 'spec' | 'code') => void }, options?: { rootDir?: string }): () => void;
