import type { Migration } from '../migrate.js';

// The event log by resource: a shred (vault/copies-repository.ts eventsOf: the events of a customer's
// methods and payments, on every unenroll and customer deletion) read webhook_events by
// resource_id = ANY(...), which only the (organization_id, created_at) index served: every event of the
// organization scanned under the caller's transaction. Idempotent. (A plain CREATE INDEX: it blocks writes to
// the event log while it builds, once, at the upgrade's start.)
export default {
  version: '0033_event_resource_index',
  sql: `
CREATE INDEX IF NOT EXISTS webhook_events_resource_idx ON webhook_events (organization_id, resource_id);
`,
} satisfies Migration;
