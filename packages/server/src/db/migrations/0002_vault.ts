import type { Migration } from '../migrate.js';

// The card vault: enrolled payment methods and the registry of vault keys.
//
// The PAN exists only as AES-256-GCM ciphertext (pan_ciphertext/iv/tag) under the key named by
// pan_key_id, so keys can rotate row by row. The security code has no column: it is never stored.
// `fingerprint` is a per-organization keyed HMAC of the PAN (never a plain hash).
export default {
  version: '0002_vault',
  sql: `
-- One row per key id ever used in this database: a key check value (an HMAC made with the key, never the
-- key) so that a start with different key material under a known id fails instead of writing cards
-- that the rest of the fleet cannot decrypt. The oldest row is the root of the card fingerprints.
CREATE TABLE vault_keys (
  id text PRIMARY KEY,
  check_value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE payment_methods (
  id text PRIMARY KEY,
  vaulted_token text NOT NULL UNIQUE,
  organization_id text NOT NULL REFERENCES organizations(id),
  customer_id text NOT NULL REFERENCES customers(id),
  account_id text NOT NULL REFERENCES accounts(id),
  idempotency_key text,
  type text NOT NULL,
  category text NOT NULL,
  country text NOT NULL,
  status text NOT NULL CHECK (status IN ('CREATED', 'EXPIRED', 'REJECTED', 'READY_TO_ENROLL', 'DECLINED', 'CANCELED',
    'ENROLL_IN_PROCESS', 'ENROLLED', 'UNENROLL_IN_PROCESS', 'UNENROLLED', 'ERROR')),
  sub_status text,
  workflow text NOT NULL DEFAULT 'DIRECT',
  callback_url text,
  action text,
  redirect_url text,
  parent_type text,
  token text,
  customer_payer jsonb,
  recurring_payment jsonb,
  provider_data jsonb,
  -- Non-card details as shown back (masked); the full details only as ciphertext.
  details jsonb,
  details_ciphertext bytea,
  details_iv bytea,
  details_tag bytea,
  details_key_id text,
  card_brand text,
  card_iin text,
  card_lfd text,
  card_number_length integer,
  card_security_code_length integer,
  card_expiration_month integer CHECK (card_expiration_month BETWEEN 1 AND 12),
  card_expiration_year integer CHECK (card_expiration_year BETWEEN 0 AND 99),
  card_holder_name text,
  card_issuer text,
  card_issuer_name text,
  card_issuer_code text,
  card_category text,
  card_funding_type text,
  pan_ciphertext bytea,
  pan_iv bytea,
  pan_tag bytea,
  pan_key_id text,
  fingerprint text,
  verify jsonb,
  verify_provider_id text,
  verify_provider_transaction_id text,
  preferred boolean,
  last_successfully_used boolean,
  last_successfully_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- A vaulted PAN is all four parts or none.
  CONSTRAINT payment_methods_pan_complete CHECK (
    (pan_ciphertext IS NULL AND pan_iv IS NULL AND pan_tag IS NULL AND pan_key_id IS NULL)
    OR (pan_ciphertext IS NOT NULL AND pan_iv IS NOT NULL AND pan_tag IS NOT NULL AND pan_key_id IS NOT NULL)),
  CONSTRAINT payment_methods_card_masked CHECK (card_iin IS NULL OR card_iin ~ '^[0-9]{6,8}$'),
  CONSTRAINT payment_methods_card_lfd CHECK (card_lfd IS NULL OR card_lfd ~ '^[0-9]{4}$')
);
-- The list: a customer's methods newest first, and cursor paging on (created_at, id).
CREATE INDEX payment_methods_customer_idx ON payment_methods (customer_id, created_at DESC, id DESC);
CREATE INDEX payment_methods_fingerprint_idx ON payment_methods (organization_id, fingerprint) WHERE fingerprint IS NOT NULL;
CREATE INDEX payment_methods_pan_key_idx ON payment_methods (pan_key_id) WHERE pan_key_id IS NOT NULL;
CREATE INDEX payment_methods_details_key_idx ON payment_methods (details_key_id) WHERE details_key_id IS NOT NULL;
`,
} satisfies Migration;
