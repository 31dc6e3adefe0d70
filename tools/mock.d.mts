// Types for mock.mjs (imported by tools/test/mock.test.ts).
import type { ChildProcess } from 'node:child_process';
export declare function mockableSpec<T extends { servers?: { url: string }[]; paths?: Record<string, unknown> }>(spec: T): T;
export declare function startMock(options?: {
  port?: number;
  host?: string;
  dynamic?: boolean;
  seed?: string;
  specFile?: string;
  stdio?: 'inherit' | 'pipe';
}): { url: string; child: ChildProcess; ready: Promise<void>; stop(): Promise<void> };
