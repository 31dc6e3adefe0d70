import type { Migration } from '../migrate.js';

// Asynchronous payment methods (issue 24 item 4: PIX, bank transfer, cash vouchers, redirect wallets): a
// payment waits PENDING for the shopper until the deadline of the action it was shown. action_expires_at
// is that deadline; the expiry worker (payments/async-methods/expiry-worker.ts, on every instance) claims
// the PENDING payments past it with FOR UPDATE SKIP LOCKED, and the partial index keeps each claim to
// the few payments still waiting. Idempotent (IF NOT EXISTS).
export default {
  version: '0023_async_payment_expiry',
  sql: `
ALTER TABLE payments ADD COLUMN IF NOT EXISTS action_expires_at timestamptz;
CREATE INDEX IF NOT EXISTS payments_waiting_action_idx ON payments (action_expires_at) WHERE status = 'PENDING' AND action_expires_at IS NOT NULL;
`,
} satisfies Migration;
