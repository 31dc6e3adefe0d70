import type { Migration } from '../migrate.js';

// Tenancy, credentials, idempotency and customers. Ids are UUID text (path ids may be any 36–64 chars,
// so a lookup with a malformed id is simply "not found", never a cast error).
export default {
  version: '0001_platform',
  sql: `
CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  pci_certified boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX accounts_organization_idx ON accounts (organization_id);

-- Only a SHA-256 of the (high-entropy, random) secret is kept.
CREATE TABLE api_keys (
  public_key text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  secret_sha256 bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id);

-- One row per (organization, key): the request fingerprint and the stored reply, written in the same
-- transaction as the operation's own effects.
CREATE TABLE idempotency_keys (
  organization_id text NOT NULL REFERENCES organizations(id),
  idempotency_key text NOT NULL,
  fingerprint text NOT NULL,
  operation_id text NOT NULL,
  status_code integer NOT NULL,
  response_headers jsonb NOT NULL DEFAULT '{}',
  response_body jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

CREATE TABLE customers (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  merchant_customer_id text NOT NULL,
  first_name text,
  last_name text,
  gender text,
  date_of_birth date,
  email text,
  nationality text,
  country text,
  document jsonb,
  phone jsonb,
  billing_address jsonb,
  shipping_address jsonb,
  metadata jsonb NOT NULL DEFAULT '[]',
  merchant_customer_created_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT customers_merchant_customer_id_key UNIQUE (organization_id, merchant_customer_id)
);
`,
} satisfies Migration;
