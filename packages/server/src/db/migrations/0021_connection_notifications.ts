import type { Migration } from '../migrate.js';

// Provider notifications per connection (issue 22, POST /v1/provider-notifications/{connection_id}).
//
// connection_notifications: every event of a verified notification, by (connection, the provider's
// notification id), written in the same transaction as its effect, so a re-delivery changes nothing
// twice. `state` is what became of it: APPLIED (it changed something), UNCHANGED (it confirmed what was
// already so), IGNORED (nothing of this connection's organization to act on; `detail` says why), or PARKED:
// it is about something not recorded yet (a refund's failure before its answer was, a dispute's outcome
// before its chargeback), kept with what it waits for (`awaits_reference`: our transaction id;
// `awaits_provider_id`: the provider's id of the operation or chargeback) and applied when that lands.
// `event` is the translated event (the provider's raw body is not kept here).
//
// payment_transactions_connection_provider_idx: notifications name the provider's ids; a transaction is
// found by its connection and the provider's id, never across connections (so never across organizations).
// Idempotent (IF NOT EXISTS).
export default {
  version: '0021_connection_notifications',
  sql: `
CREATE TABLE IF NOT EXISTS connection_notifications (
  connection_id text NOT NULL,
  notification_id text NOT NULL,
  kind text NOT NULL,
  state text NOT NULL CHECK (state IN ('APPLIED', 'UNCHANGED', 'IGNORED', 'PARKED')),
  detail text,
  event jsonb NOT NULL,
  awaits_reference text,
  awaits_provider_id text,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  settled_at timestamptz,
  PRIMARY KEY (connection_id, notification_id)
);
CREATE INDEX IF NOT EXISTS connection_notifications_parked_reference_idx
  ON connection_notifications (connection_id, awaits_reference) WHERE state = 'PARKED' AND awaits_reference IS NOT NULL;
CREATE INDEX IF NOT EXISTS connection_notifications_parked_provider_idx
  ON connection_notifications (connection_id, awaits_provider_id) WHERE state = 'PARKED' AND awaits_provider_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS payment_transactions_connection_provider_idx
  ON payment_transactions (connection_id, provider_transaction_id) WHERE provider_transaction_id IS NOT NULL;
`,
} satisfies Migration;
