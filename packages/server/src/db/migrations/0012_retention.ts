import type { Migration } from '../migrate.js';

// The retention job (retention/job.ts) finds events past their lifetime by created_at alone, across
// organizations. Idempotent (IF NOT EXISTS).
export default {
  version: '0012_retention',
  sql: `
CREATE INDEX IF NOT EXISTS webhook_events_created_idx ON webhook_events (created_at);
`,
} satisfies Migration;
