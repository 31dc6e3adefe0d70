/**
 * The sandbox acquirers as their own process (tests that SIGKILL the service keep the acquirers'
 * ledgers alive): prints `{"SANDBOX_A_URL": …, "SANDBOX_B_URL": …}` on one line, serves until killed.
 *   node dist/providers/sandbox/acquirers-main.js   (or: npx tsx src/providers/sandbox/acquirers-main.ts)
 */
import { startSandboxAcquirers } from './acquirers.js';

const acquirers = await startSandboxAcquirers();
process.stdout.write(`${JSON.stringify({ SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url })}\n`);
// The servers are unref'd (they never keep a service alive); this process exists to serve them.
const keepAlive = setInterval(() => {}, 1 << 30);
const stop = () => {
  clearInterval(keepAlive);
  void acquirers.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
