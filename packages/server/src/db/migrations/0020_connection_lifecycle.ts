import type { Migration } from '../migrate.js';

// Connections a merchant creates and deletes (issue 22 §1).
//
// environment: which of the provider's environments the sealed credentials belong to (TEST or LIVE);
// every connection made before this migration is a sandbox one, so TEST.
//
// deleted_at: a deleted connection is soft-deleted. It leaves the API's list and every route, but the row
// and its sealed credentials stay: the follow-ups (capture, void, refund) and the reconciliation of
// payments made through it still open it, as they open a disabled connection.
//
// Idempotent (IF NOT EXISTS): running it again changes nothing.
export default {
  version: '0020_connection_lifecycle',
  sql: `
ALTER TABLE provider_connections ADD COLUMN IF NOT EXISTS environment TEXT NOT NULL DEFAULT 'TEST' CHECK (environment IN ('TEST', 'LIVE'));
ALTER TABLE provider_connections ADD COLUMN IF NOT EXISTS deleted_at TIMESTAMPTZ;
`,
} satisfies Migration;
