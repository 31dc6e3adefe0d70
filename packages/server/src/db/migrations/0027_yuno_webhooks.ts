import type { Migration } from '../migrate.js';

// Yuno's webhook management view (issue 24 §3) of the same webhook endpoints: the merchant's Yuno trigger
// lists and renewal_days as given (yuno_triggers; NULL when the endpoint was last subscribed through
// /webhook-endpoints, whose `events` stay the truth either way), and the headers Yuno's configuration sends
// on every delivery (api_key → x-api-key, secret → x-secret) and the key of its x-hmac-signature, each
// sealed like the signing secrets (AES-256-GCM under the vault keyring, key_id names the key).
// Idempotent (IF NOT EXISTS).
export default {
  version: '0027_yuno_webhooks',
  sql: `
ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS yuno_triggers jsonb;

CREATE TABLE IF NOT EXISTS webhook_endpoint_credentials (
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('api_key', 'secret', 'hmac_client_secret')),
  key_id text NOT NULL,
  ciphertext bytea NOT NULL,
  iv bytea NOT NULL,
  tag bytea NOT NULL,
  PRIMARY KEY (endpoint_id, kind)
);
`,
} satisfies Migration;
