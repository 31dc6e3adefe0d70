import type { Migration } from '../migrate.js';

// Bounds on what the public-key checkout routes can write (issue 25, docs/guides/checkout.md "Limits"):
// cards_taken counts the cards a checkout session tokenized or a customer session enrolled; the route
// takes one more only while it is under CHECKOUT_SESSION_MAX_CARDS (one atomic UPDATE … WHERE
// cards_taken < max). A link's checkout sessions are made when a shopper submits a card (not per page
// visit); the indexes serve the per-link lookups (a one-time link's live payment) and the retention job,
// which deletes a link's sessions that expired unpaid, with their tokens.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0029_checkout_limits',
  sql: `
ALTER TABLE checkout_sessions ADD COLUMN IF NOT EXISTS cards_taken integer NOT NULL DEFAULT 0;
ALTER TABLE customer_sessions ADD COLUMN IF NOT EXISTS cards_taken integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS checkout_sessions_link_idx ON checkout_sessions (payment_link_code) WHERE payment_link_code IS NOT NULL;
CREATE INDEX IF NOT EXISTS checkout_sessions_unpaid_link_expiry_idx ON checkout_sessions (expires_at) WHERE payment_link_code IS NOT NULL AND payment_id IS NULL;
CREATE INDEX IF NOT EXISTS one_time_tokens_session_idx ON one_time_tokens (checkout_session) WHERE checkout_session IS NOT NULL;
`,
} satisfies Migration;
