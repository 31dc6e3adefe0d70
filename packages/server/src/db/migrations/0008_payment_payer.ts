import type { Migration } from '../migrate.js';

// Yuno's request shapes for POST /payments (issue 14 §1).
//
// payments.customer_id becomes nullable: a payer given inline without `id` pays without an enrolled
// customer (Yuno allows it); the payer snapshot (customer_payer) is what the payment records either way.
// request_details keeps the create request's fields the sandbox stores without acting on them
// (checkout, fraud_screening, split_marketplace), as given.
//
// Idempotent (IF NOT EXISTS / DROP NOT NULL): running it again changes nothing.
export default {
  version: '0008_payment_payer',
  sql: `
ALTER TABLE payments ALTER COLUMN customer_id DROP NOT NULL;
ALTER TABLE payments ADD COLUMN IF NOT EXISTS request_details json;
`,
} satisfies Migration;
