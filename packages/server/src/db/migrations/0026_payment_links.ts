import type { Migration } from '../migrate.js';

// Payment links (issue 25 §5): a page payorch hosts where a shopper pays `amount` by card. Each visit of
// the page opens a checkout session of the link (checkout_sessions.payment_link_code), so the link's
// payments go through the same one-time tokens. status holds only what a request decided (ACTIVE,
// CANCELED); PAID (a one-time link with a successful payment) and EXPIRED (past finish_at) are decided at
// read from its payments and the clock, so no job has to run and every instance agrees. checkout_url is
// written once, from PUBLIC_BASE_URL, so that events (written where no request is at hand) carry it too.
// payment_link_payments: the successful payments of the link, written in the approving transaction.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0026_payment_links',
  sql: `
CREATE TABLE IF NOT EXISTS payment_links (
  code text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  account_id text NOT NULL,
  country text NOT NULL,
  description text,
  merchant_order_id text,
  currency text NOT NULL,
  amount_value numeric NOT NULL CHECK (amount_value > 0),
  capture boolean NOT NULL,
  one_time_use boolean NOT NULL,
  callback_url text,
  metadata jsonb,
  checkout_url text NOT NULL,
  status text NOT NULL CHECK (status IN ('ACTIVE', 'CANCELED')),
  start_at timestamptz NOT NULL,
  finish_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS payment_link_payments (
  code text NOT NULL REFERENCES payment_links(code),
  payment_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (code, payment_id)
);
ALTER TABLE checkout_sessions ADD COLUMN IF NOT EXISTS payment_link_code text REFERENCES payment_links(code);
`,
} satisfies Migration;
