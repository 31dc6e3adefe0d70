import type { Migration } from '../migrate.js';

// Connections and routing (issue 16 §2, docs/guides/routing.md).
//
// provider_connections: an organization's access to one provider. The credentials are sealed with the
// vault keyring (routing/connection-secrets.ts, a purpose of their own, bound to the row); SQL never sees
// them in clear. timeout_ms is bounded here as in the spec (100–60 000 ms).
//
// routings: one per (account, payment method), as Yuno. The routes are kept as jsonb (validated by the
// service and read whole on every payment); id is `r_<uuid>` as Yuno shows it.
//
// Idempotent (IF NOT EXISTS): running it again changes nothing.
export default {
  version: '0016_routing',
  sql: `
CREATE TABLE IF NOT EXISTS provider_connections (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  provider_id TEXT NOT NULL,
  name TEXT NOT NULL,
  ciphertext BYTEA NOT NULL,
  iv BYTEA NOT NULL,
  tag BYTEA NOT NULL,
  key_id TEXT NOT NULL,
  enabled BOOLEAN NOT NULL DEFAULT TRUE,
  timeout_ms INTEGER NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 100 AND 60000),
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS provider_connections_org_idx ON provider_connections (organization_id, created_at, id);
CREATE INDEX IF NOT EXISTS provider_connections_key_idx ON provider_connections (key_id);

CREATE TABLE IF NOT EXISTS routings (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  account_id TEXT NOT NULL REFERENCES accounts(id),
  payment_method TEXT NOT NULL,
  name TEXT NOT NULL,
  default_route JSONB NOT NULL,
  condition_sets JSONB NOT NULL DEFAULT '[]'::jsonb,
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT routings_account_method_key UNIQUE (account_id, payment_method)
);
CREATE INDEX IF NOT EXISTS routings_org_idx ON routings (organization_id, created_at, id);
`,
} satisfies Migration;
