// The designer's loop type-checks and builds in this worker thread, at a lower CPU priority than the
// linters' worker: on two cores the warm Spectral run and the type-check each want one, and their garbage
// collectors want more; the first error a designer sees is most often Spectral's, so Spectral goes first
// and the type-check takes what is left (it still runs beside it: a valid save waits for both). One
// message { id, project } → { id, result } (typescript-incremental.mjs's build result), or { id, error }.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createIncrementalProject } from './typescript-incremental.mjs';

// Linux: this thread's own id (/proc/thread-self → "<pid>/task/<tid>"); setpriority on a thread id
// changes that thread only. Elsewhere (or without /proc) the worker simply keeps the normal priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
} catch {
  // not Linux, or not allowed: same priority as the rest
}

const projects = new Map(
  Object.entries(workerData.projects).map(([name, configPath]) => [name, createIncrementalProject({ configPath, cacheDir: workerData.cacheDir, cwd: workerData.cwd })]),
);

parentPort.on('message', ({ id, project }) => {
  try {
    parentPort.postMessage({ id, result: projects.get(project).build() });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
