import type { Migration } from '../migrate.js';

// Bounds on what the public-key checkout routes can write (issue 25, docs/guides/checkout.md "Limits"):
// cards_taken counts the cards a checkout session tokenized or a customer session enrolled; the route
// takes one more only while it is under CHECKOUT_SESSION_MAX_CARDS (one atomic UPDATE … WHERE
// cards_taken < max). The index serves the per-link lookups (a one-time link's live payment) now that
// a link's sessions are made when a shopper submits a card rather than per page visit.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0029_checkout_limits',
  sql: `
ALTER TABLE checkout_sessions ADD COLUMN IF NOT EXISTS cards_taken integer NOT NULL DEFAULT 0;
ALTER TABLE customer_sessions ADD COLUMN IF NOT EXISTS cards_taken integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS checkout_sessions_link_idx ON checkout_sessions (payment_link_code) WHERE payment_link_code IS NOT NULL;
`,
} satisfies Migration;
