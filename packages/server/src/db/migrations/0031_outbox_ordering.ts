import type { Migration } from '../migrate.js';

// Outbox messages that must reach their recipient in the order they were written carry an ordering key:
// the worker claims only the oldest undelivered message of a key, so a later one waits while an earlier
// one is retried (payments/outbox/repository.ts claim). A dispute's evidence batches use `dispute:<id>`:
// a PATCH's batch reaching the provider before the POST's that opened the dispute would be refused or
// filed out of order. Messages already waiting get their key here. Idempotent (IF NOT EXISTS; the update
// touches only messages without a key).
export default {
  version: '0031_outbox_ordering',
  sql: `
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS ordering_key text;
UPDATE outbox SET ordering_key = 'dispute:' || (payload->>'dispute_id')
 WHERE topic = 'dispute.evidence' AND delivered_at IS NULL AND ordering_key IS NULL AND payload->>'dispute_id' IS NOT NULL;
CREATE INDEX IF NOT EXISTS outbox_ordering_idx ON outbox (ordering_key, created_at) WHERE delivered_at IS NULL AND ordering_key IS NOT NULL;
`,
} satisfies Migration;
