/**
 * The Stripe double as its own process, for the bench's `POST /payments through the Stripe double` (a
 * provider elsewhere, as the sandbox acquirers' process is): prints `{"STRIPE_API_URL": …}` on one line
 * and serves until SIGTERM / SIGINT. The bench compiles it with bench/tsconfig.stripe-double.json into
 * dist/test-doubles/ (Node 20 runs no TypeScript, and the repository has no tsx), then runs
 *   node dist/test-doubles/doubles/stripe/main.js
 * Its ledger and request log are in memory: a bench run's few thousand payments, not a long-lived service.
 */
import { startStripeDouble } from './server.js';

const double = await startStripeDouble();
process.stdout.write(`${JSON.stringify({ STRIPE_API_URL: double.url })}\n`);
const keepAlive = setInterval(() => {}, 1 << 30);
const stop = () => {
  clearInterval(keepAlive);
  void double.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
