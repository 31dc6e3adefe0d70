import type { Migration } from '../migrate.js';

// Per-record data keys of the card vault (issue 21, finding 3: unenrolling and deleting must shred).
//
// Each vaulted method's secrets (the PAN, the full bank or token details) are sealed under a random data key
// of its own; that key is kept here, wrapped by the vault keyring (a purpose key derived from it, key_id names
// the keyring key). Unenrolling or deleting the customer deletes this row: the method's ciphertext, and every
// copy of it left in dead row versions, WAL or backups, no longer opens with the keyring.
// A method sealed this way names the data key in its *_key_id columns as 'record-key:v1' (not a possible
// keyring id: those have no colon). Rows sealed before this migration are moved to data keys at the next
// start, in code (the keyring is not in the database): vault/services.ts rewrapPaymentMethods.
//
// Idempotent (IF NOT EXISTS): running it again changes nothing.
export default {
  version: '0018_payment_method_keys',
  sql: `
CREATE TABLE IF NOT EXISTS payment_method_keys (
  payment_method_id text PRIMARY KEY REFERENCES payment_methods(id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations(id),
  key_id text NOT NULL,
  ciphertext bytea NOT NULL,
  iv bytea NOT NULL,
  tag bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS payment_method_keys_key_idx ON payment_method_keys (key_id);
`,
} satisfies Migration;
