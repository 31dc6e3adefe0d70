import type { Migration } from '../migrate.js';

// Reconciliation claims fairly across organizations (issue 21, finding 6): every claim counts what each
// organization holds (PENDING with a lease running) and ranks what is due (PENDING past its reconcile
// time, follow-ups by their age), over PENDING transactions only. Without an index on them each claim,
// every few seconds on every instance, read the whole payment_transactions table; this partial index
// keeps it to the few rows whose outcome is still unknown. The back-off state needs no new column: it is
// `reconcile_attempts` (counted at claim time) and `reconcile_after` on the transaction (0017).
// Idempotent (IF NOT EXISTS).
export default {
  version: '0019_reconciliation_queue',
  sql: `
CREATE INDEX IF NOT EXISTS payment_transactions_pending_idx ON payment_transactions (created_at) WHERE status = 'PENDING';
`,
} satisfies Migration;
