// The designer's loop lints in this worker thread, warm, while the main thread generates and type-checks
// (both are CPU-bound; on two cores they overlap). One message { id, specEntry } → one answer
// { id, spectral: string[], redocly: string[] } (the problems, formatted file:line:col), or { id, error }.
import { parentPort, workerData } from 'node:worker_threads';
import { createSpectralLinter } from './lint-spectral.mjs';
import { formatProblem, lintSpec } from './lint-redocly.mjs';

const spectral = createSpectralLinter({ rulesetPath: workerData.rulesetPath, cwd: workerData.cwd });

parentPort.on('message', async ({ id, specEntry }) => {
  try {
    // Spectral first (the longer one), Redocly's resolution interleaves with it.
    const [s, redocly] = await Promise.all([spectral.lint(specEntry), lintSpec(specEntry)]);
    parentPort.postMessage({ id, spectral: s.problems, redocly: redocly.map(formatProblem) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
