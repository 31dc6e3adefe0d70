import type { Migration } from '../migrate.js';

// Deleting a customer (issue 15). The row stays, so payments keep their customer_id, but it is marked
// deleted_at and its personal data is cleared; every read of the API skips it. merchant_customer_id is
// unique among the organization's live customers only, so a deleted customer's id can be used again.
//
// Idempotent (IF NOT EXISTS / IF EXISTS): running it again changes nothing.
export default {
  version: '0009_customer_deletion',
  sql: `
ALTER TABLE customers ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
CREATE UNIQUE INDEX IF NOT EXISTS customers_live_merchant_customer_id_key
  ON customers (organization_id, merchant_customer_id) WHERE deleted_at IS NULL;
ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_merchant_customer_id_key;
`,
} satisfies Migration;
