import type { Migration } from '../migrate.js';

// A claim of due webhook deliveries reads a bounded number of rows whatever the backlog (repository.ts
// claimDue): per endpoint, its earliest due deliveries (the first index) up to what its caps leave, and the
// deliveries in flight (the second: leased rows only). Before, every claim ranked every due delivery of every
// organization (linear in the backlog: ~1.1 s at 200,000 due on PGlite). The first index also serves the
// metrics' queue figures per enabled endpoint (queueStats), so the global due-time index goes: nothing reads
// it any more, and the planner took it for a claim's per-endpoint read (filtering every due row). Idempotent. (Plain CREATE INDEX: it blocks writes
// to webhook_deliveries while it builds, once, at the upgrade's start.)
export default {
  version: '0036_webhook_claim_indexes',
  sql: `
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, event_seq) WHERE status = 'PENDING';
CREATE INDEX IF NOT EXISTS webhook_deliveries_leased_idx ON webhook_deliveries (locked_until) WHERE locked_until IS NOT NULL;
DROP INDEX IF EXISTS webhook_deliveries_due_idx;
`,
} satisfies Migration;
