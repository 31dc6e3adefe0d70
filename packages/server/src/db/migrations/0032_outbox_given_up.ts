import type { Migration } from '../migrate.js';

// An outbox message whose recipient refused it for good (a provider's definitive 4xx: sending the same
// again is refused again) is given up: `given_up_at` set with the reason in `last_error`, never claimed
// again, and no longer holding back the later messages of its ordering key (0031). Idempotent.
export default {
  version: '0032_outbox_given_up',
  sql: `
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS given_up_at timestamptz;
`,
} satisfies Migration;
