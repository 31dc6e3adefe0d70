import type { Migration } from '../migrate.js';

// Listing payments (GET /v1/payments, issue 15): by merchant_order_id (Yuno's lookup) and by customer,
// newest first on (created_at, id) for the cursor. Idempotent (IF NOT EXISTS).
export default {
  version: '0011_payment_search',
  sql: `
CREATE INDEX IF NOT EXISTS payments_merchant_order_idx ON payments (organization_id, merchant_order_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS payments_customer_idx ON payments (organization_id, customer_id, created_at DESC, id DESC);
`,
} satisfies Migration;
