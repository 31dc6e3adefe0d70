import type { Migration } from '../migrate.js';

// Listing customers (issue 15): newest first per organization, live customers only, paged by
// (created_at, id). Idempotent (IF NOT EXISTS).
export default {
  version: '0013_customer_list',
  sql: `
CREATE INDEX IF NOT EXISTS customers_live_created_idx ON customers (organization_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
`,
} satisfies Migration;
