import type { Migration } from '../migrate.js';

// The event log (GET /v1/events, issue 15): an organization's events newest first, on (created_at, id)
// for the cursor, optionally of one type. Idempotent (IF NOT EXISTS).
export default {
  version: '0010_event_log',
  sql: `
CREATE INDEX IF NOT EXISTS webhook_events_organization_idx ON webhook_events (organization_id, created_at DESC, id DESC);
`,
} satisfies Migration;
