import type { Migration } from '../migrate.js';

// The issuer's country of an enrolled card (EnrolledCardData.country_code), from the provider's BIN data when
// a verification ran, as payments record it. Idempotent (IF NOT EXISTS).
export default {
  version: '0013_enrolled_card_country',
  sql: `
ALTER TABLE payment_methods ADD COLUMN IF NOT EXISTS card_country_code TEXT;
`,
} satisfies Migration;
