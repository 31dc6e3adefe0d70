import type { Migration } from '../migrate.js';

// Webhooks: merchants' endpoints and their (encrypted) signing secrets, the events (an outbox written in
// the same transaction as the change each announces), one delivery per event and endpoint, and the log
// of every HTTP attempt.
export default {
  version: '0005_webhooks',
  sql: `
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  url text NOT NULL,
  description text,
  events jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Deleted endpoints stay (their delivery log references them) but are invisible and get nothing.
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_organization_idx ON webhook_endpoints (organization_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- AES-256-GCM under a key derived from the vault keyring (key_id names it). expires_at NULL is the
-- current secret; a rotated-out secret keeps signing until its expires_at (the overlap window).
CREATE TABLE webhook_endpoint_secrets (
  id text PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  key_id text NOT NULL,
  ciphertext bytea NOT NULL,
  iv bytea NOT NULL,
  tag bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz
);
CREATE INDEX webhook_endpoint_secrets_endpoint_idx ON webhook_endpoint_secrets (endpoint_id);
CREATE UNIQUE INDEX webhook_endpoint_secrets_current_key ON webhook_endpoint_secrets (endpoint_id) WHERE expires_at IS NULL;

-- seq orders the events of one resource (state changes of a resource are serialized by its row lock).
CREATE TABLE webhook_events (
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text,
  type text NOT NULL,
  resource_id text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
  event_id text NOT NULL REFERENCES webhook_events(id),
  event_seq bigint NOT NULL,
  event_type text NOT NULL,
  resource_id text NOT NULL,
  status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'CANCELED')),
  attempts integer NOT NULL DEFAULT 0,
  -- Failed attempts since the schedule (re)started: the index into the backoff schedule.
  failures integer NOT NULL DEFAULT 0,
  -- MANUAL after a redelivery, until the next attempt.
  next_trigger text NOT NULL DEFAULT 'SCHEDULED',
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Lease of the worker that claimed it (expires, so a crashed worker's claim is taken over).
  lease_id text,
  locked_until timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT webhook_deliveries_event_endpoint_key UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, resource_id, event_seq) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE webhook_delivery_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries(id),
  attempt integer NOT NULL,
  trigger text NOT NULL,
  started_at timestamptz NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  succeeded boolean NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
`,
} satisfies Migration;
