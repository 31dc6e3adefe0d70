import type { Migration } from '../migrate.js';

// Payments, their transactions and status history, disputes with their evidence, provider
// notifications (deduplicated by id), the transactional outbox, and the sandbox provider's own
// bookkeeping. Amounts are NUMERIC (exact, major units); `seq` columns give a stable order when two
// rows share a timestamp.
export default {
  version: '0003_payments',
  sql: `
CREATE TABLE payments (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text NOT NULL REFERENCES accounts(id),
  customer_id text NOT NULL REFERENCES customers(id),
  description text NOT NULL,
  country text NOT NULL,
  merchant_order_id text NOT NULL,
  status text NOT NULL,
  sub_status text NOT NULL,
  currency text NOT NULL,
  amount_value numeric NOT NULL CHECK (amount_value > 0),
  amount_captured numeric NOT NULL DEFAULT 0 CHECK (amount_captured >= 0),
  amount_refunded numeric NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0),
  workflow text NOT NULL,
  callback_url text,
  -- API-shaped documents are json (not jsonb): kept exactly as written, key order included.
  metadata json NOT NULL DEFAULT '[]',
  additional_data json,
  -- Snapshots taken when the payment was made: what the payer and the method were at that time.
  customer_payer json NOT NULL,
  payment_method json NOT NULL,
  taxes json,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payments_organization_idx ON payments (organization_id, created_at);

CREATE TABLE payment_transactions (
  id text PRIMARY KEY,
  payment_id text NOT NULL REFERENCES payments(id),
  seq bigserial NOT NULL,
  type text NOT NULL,
  status text NOT NULL,
  category text NOT NULL,
  amount numeric NOT NULL CHECK (amount >= 0),
  provider_id text,
  payment_method json NOT NULL,
  response_code text,
  response_message text,
  reason text,
  description text,
  merchant_reference text,
  -- provider_data without raw_response; the raw response is kept apart, exactly as received.
  provider_data json NOT NULL,
  raw_response json,
  provider_transaction_id text,
  connection_data json NOT NULL,
  merchant_advice_code text,
  merchant_advice_code_message text,
  -- A chargeback remembers the payment's state before it, which a won dispute restores.
  payment_status_before text,
  payment_sub_status_before text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payment_transactions_payment_idx ON payment_transactions (payment_id, seq);

CREATE TABLE payment_history (
  id text PRIMARY KEY,
  payment_id text NOT NULL REFERENCES payments(id),
  seq bigserial NOT NULL,
  status text NOT NULL,
  sub_status text NOT NULL,
  transaction_id text REFERENCES payment_transactions(id),
  transaction_status text,
  reason text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payment_history_payment_idx ON payment_history (payment_id, seq);

-- One dispute per chargeback transaction (a second dispute is refused by the state check and this key).
CREATE TABLE disputes (
  id text PRIMARY KEY,
  payment_id text NOT NULL REFERENCES payments(id),
  transaction_id text NOT NULL UNIQUE REFERENCES payment_transactions(id),
  status text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  resolved_at timestamptz
);

CREATE TABLE dispute_evidence (
  id text PRIMARY KEY,
  dispute_id text NOT NULL REFERENCES disputes(id),
  seq bigserial NOT NULL,
  file_name text NOT NULL,
  content_type text NOT NULL,
  content_category text NOT NULL,
  size_bytes integer NOT NULL,
  sha256 bytea NOT NULL,
  content bytea NOT NULL,
  forwarded_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX dispute_evidence_dispute_idx ON dispute_evidence (dispute_id, seq);

-- Notifications from providers, kept by id: a repeated id is acknowledged and changes nothing.
CREATE TABLE provider_notifications (
  provider_id text NOT NULL,
  notification_id text NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (provider_id, notification_id)
);

-- Per-provider notification signing secrets (Standard Webhooks whsec_…), generated once.
CREATE TABLE provider_secrets (
  provider_id text PRIMARY KEY,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Transactional outbox: written in the same transaction as the change it announces, delivered by a
-- worker (lease through locked_until, exponential backoff through next_attempt_at) until acknowledged.
CREATE TABLE outbox (
  id text PRIMARY KEY,
  topic text NOT NULL,
  payload jsonb NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  locked_until timestamptz,
  delivered_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX outbox_pending_idx ON outbox (next_attempt_at) WHERE delivered_at IS NULL;

-- The sandbox provider's side: evidence it received, keyed by the forwarder's idempotency reference,
-- so a re-delivery after a crash is recognised and has no second effect.
CREATE TABLE sandbox_evidence_forwards (
  reference text PRIMARY KEY,
  provider_dispute_id text NOT NULL,
  payment_id text NOT NULL,
  chargeback_id text,
  documents jsonb NOT NULL,
  deliveries integer NOT NULL DEFAULT 1,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_delivery_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`,
} satisfies Migration;
