import type { Migration } from '../migrate.js';

// A late approval's reversal (orchestration/reversals.ts) can fail at the provider after it was accepted
// (an Adyen cancel-or-refund answered "received", a Stripe or Mercado Pago refund that fails later): the
// attempt counts its failed reversals, so that reconciliation's next reversal goes out under a reference of
// its own (a retry under the failed one's idempotency key would only replay the failure) and gives up, visibly,
// after a bounded number. Idempotent (IF NOT EXISTS).
export default {
  version: '0030_late_approval_reversals',
  sql: `
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS reversals_failed integer NOT NULL DEFAULT 0;
`,
} satisfies Migration;
