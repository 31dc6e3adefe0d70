import type { Migration } from '../migrate.js';

// Every secret at rest sealed with the vault keyring (issue 12 item 4).
//
// provider_secrets: the provider's notification signing secret was kept in clear. It gets sealed columns
// like webhook_endpoint_secrets (AES-256-GCM under a key derived from the vault keyring; key_id names the
// vault key). SQL cannot seal (the keys are not in the database): the clear column stays, nullable, for
// rows written before this migration, and every start seals any clear row it finds and clears the column
// (providers/sandbox/notification-secret.ts), so a row an older instance writes during a rolling upgrade
// is sealed by the next start too.
//
// vault_keys: the card-fingerprint root key is kept wrapped (sealed under the active vault key, re-sealed
// on rotation) so that the key it came from can leave the keyring once nothing else is sealed under it.
//
// Idempotent (IF NOT EXISTS / IF EXISTS): running it again changes nothing.
export default {
  version: '0007_sealed_secrets',
  sql: `
ALTER TABLE provider_secrets
  ADD COLUMN IF NOT EXISTS ciphertext bytea,
  ADD COLUMN IF NOT EXISTS iv bytea,
  ADD COLUMN IF NOT EXISTS tag bytea,
  ADD COLUMN IF NOT EXISTS key_id text;
ALTER TABLE provider_secrets ALTER COLUMN secret DROP NOT NULL;
ALTER TABLE provider_secrets DROP CONSTRAINT IF EXISTS provider_secrets_sealed;
ALTER TABLE provider_secrets ADD CONSTRAINT provider_secrets_sealed CHECK (
  (ciphertext IS NULL AND iv IS NULL AND tag IS NULL AND key_id IS NULL AND secret IS NOT NULL)
  OR (ciphertext IS NOT NULL AND iv IS NOT NULL AND tag IS NOT NULL AND key_id IS NOT NULL AND secret IS NULL));
CREATE INDEX IF NOT EXISTS provider_secrets_key_idx ON provider_secrets (key_id);

ALTER TABLE vault_keys
  ADD COLUMN IF NOT EXISTS wrapped_ciphertext bytea,
  ADD COLUMN IF NOT EXISTS wrapped_iv bytea,
  ADD COLUMN IF NOT EXISTS wrapped_tag bytea,
  ADD COLUMN IF NOT EXISTS wrapped_key_id text;
`,
} satisfies Migration;
