import type { Migration } from '../migrate.js';

// Orchestration (issue 16): provider calls leave the database transaction.
//
// Idempotency "deferred" mode (idempotency/idempotency.ts): a record is claimed PENDING before the
// operation runs (no reply yet: status_code NULL), bound to the resource the operation created
// (`resource`, e.g. 'payment:<id>') in the operation's first transaction, and completed with the reply.
// `claim_id` names the claimer, so only it binds or releases the claim; `claimed_at` starts the lease
// after which an unbound claim (its claimer died before writing anything) may be taken over.
//
// Payments: `routing_rules` is how the payment was routed (the RoutePlan shown as routing_rules).
// Attempts: each provider attempt is a payment_transactions row (PURCHASE/AUTHORIZE) naming its
// connection. While its outcome is unknown it stays PENDING: `deadline_at` is when a call in flight is
// overdue (timeout + grace: its caller died), and `reconcile_after` is when the reconciliation worker
// next asks the provider (the deadline at first, now after a timeout, later after each failed lookup:
// `reconcile_attempts` is the back-off's count); `claimed_until` is a worker's lease on it.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0017_orchestration',
  sql: `
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'COMPLETE';
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS resource text;
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS claim_id text;
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS claimed_at timestamptz;
ALTER TABLE idempotency_keys ALTER COLUMN status_code DROP NOT NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check
  CHECK ((state = 'COMPLETE' AND status_code IS NOT NULL) OR (state = 'PENDING' AND status_code IS NULL));

ALTER TABLE payments ADD COLUMN IF NOT EXISTS routing_rules json;

ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS connection_id text;
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS deadline_at timestamptz;
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS reconcile_after timestamptz;
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS reconcile_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS claimed_until timestamptz;
-- The reconciliation worker's queue: attempts whose outcome is not known yet (few at any time).
CREATE INDEX IF NOT EXISTS payment_transactions_unsettled_idx ON payment_transactions (reconcile_after)
  WHERE status = 'PENDING' AND reconcile_after IS NOT NULL;
`,
} satisfies Migration;
