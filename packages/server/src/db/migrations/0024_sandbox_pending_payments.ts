import type { Migration } from '../migrate.js';

// The sandbox acquirers' ledgers learn asynchronous payments (issue 24 item 4): a payment request (kind
// PURCHASE) is PENDING until the shopper pays (APPROVED, refundable like any approval), the provider
// refuses it (DECLINED), it passes its expires_at (EXPIRED: a late payment is refused) or the shopper
// cancels it on the wallet's page (CANCELED). Idempotent.
export default {
  version: '0024_sandbox_pending_payments',
  sql: `
ALTER TABLE sandbox_acquirer_transactions ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE sandbox_acquirer_transactions DROP CONSTRAINT IF EXISTS sandbox_acquirer_transactions_status_check;
ALTER TABLE sandbox_acquirer_transactions ADD CONSTRAINT sandbox_acquirer_transactions_status_check
  CHECK (status IN ('APPROVED', 'DECLINED', 'ERROR', 'VOIDED', 'PENDING', 'EXPIRED', 'CANCELED'));
`,
} satisfies Migration;
