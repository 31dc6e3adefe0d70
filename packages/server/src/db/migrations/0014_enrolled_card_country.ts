import type { Migration } from '../migrate.js';

// The issuer's country of an enrolled card (EnrolledCardData.country_code), from the provider's BIN data, as
// payments record it. Numbered 0014 because main's 0013 is customer_list. Idempotent (IF NOT EXISTS).
export default {
  version: '0014_enrolled_card_country',
  sql: `
ALTER TABLE payment_methods ADD COLUMN IF NOT EXISTS card_country_code TEXT;
`,
} satisfies Migration;
