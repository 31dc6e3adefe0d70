import type { Migration } from '../migrate.js';

// Checkout without the card on the merchant's servers (issue 25): checkout sessions, one-time tokens and
// customer sessions.
//
// checkout_sessions: what a shopper will pay (amount, currency, account) and who may embed the hosted form
// (allowed_origins). payment_id is the last payment made with one of its tokens; whether the session is
// PAID is read from that payment (a declined payment leaves it open for another card).
//
// one_time_tokens: a card sealed for one payment. card_* hold the card (number, expiry, holder; never the
// security code) sealed under the token purpose key (derived from the vault keyring, bound to organization
// and token); they are set to NULL in the transaction that claims the token for a payment (used_at,
// payment_id), and by the retention job once the token expired unused. The row stays (masked card_data
// only) so that a replay is told "already used" rather than "unknown".
//
// customer_sessions: a customer for whom the hosted form may enroll a card, for an hour.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0025_checkout',
  sql: `
CREATE TABLE IF NOT EXISTS checkout_sessions (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text NOT NULL,
  merchant_order_id text NOT NULL,
  payment_description text NOT NULL,
  country text NOT NULL,
  currency text NOT NULL,
  amount_value numeric NOT NULL CHECK (amount_value > 0),
  alternative_amount jsonb,
  customer_id text,
  callback_url text,
  metadata jsonb,
  workflow text NOT NULL,
  installments jsonb,
  recurring_payment jsonb,
  checkout_id text,
  allowed_origins jsonb NOT NULL DEFAULT '[]',
  payment_id text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS checkout_sessions_payment_idx ON checkout_sessions (payment_id) WHERE payment_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS one_time_tokens (
  token text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text NOT NULL,
  checkout_session text REFERENCES checkout_sessions(id),
  currency text,
  amount_value numeric,
  country text,
  card_data jsonb NOT NULL,
  card_ciphertext bytea,
  card_iv bytea,
  card_tag bytea,
  card_key_id text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  payment_id text,
  CHECK ((card_ciphertext IS NULL) = (card_iv IS NULL) AND (card_iv IS NULL) = (card_tag IS NULL))
);
CREATE INDEX IF NOT EXISTS one_time_tokens_payment_idx ON one_time_tokens (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS one_time_tokens_sealed_expiry_idx ON one_time_tokens (expires_at) WHERE card_ciphertext IS NOT NULL;

CREATE TABLE IF NOT EXISTS customer_sessions (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text NOT NULL,
  customer_id text NOT NULL,
  country text NOT NULL,
  callback_url text,
  checkout_id text,
  allowed_origins jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL
);
`,
} satisfies Migration;
