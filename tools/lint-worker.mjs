// The designer's loop lints in this worker thread, warm, while the main thread generates and type-checks
// (both are CPU-bound; on two cores they overlap). One message { id, specEntry } → two answers, each as soon
// as its linter is done, Spectral first (the longer one, and the one most errors come from, so the loop can
// show a lint error without waiting for Redocly): { id, tool: 'spectral' | 'redocly', problems: string[] }
// (formatted file:line:col), or { id, tool, error }.
import { parentPort, workerData } from 'node:worker_threads';
import { createSpectralLinter } from './lint-spectral.mjs';
import { formatProblem, lintSpec } from './lint-redocly.mjs';

const spectral = createSpectralLinter({ rulesetPath: workerData.rulesetPath, cwd: workerData.cwd });

parentPort.on('message', async ({ id, specEntry }) => {
  const answer = async (tool, lint) => {
    try {
      parentPort.postMessage({ id, tool, problems: await lint() });
    } catch (err) {
      parentPort.postMessage({ id, tool, error: String(err?.stack ?? err) });
    }
  };
  // One after the other: interleaved, each would finish as late as both.
  await answer('spectral', async () => (await spectral.lint(specEntry)).problems);
  await answer('redocly', async () => (await lintSpec(specEntry)).map(formatProblem));
});
