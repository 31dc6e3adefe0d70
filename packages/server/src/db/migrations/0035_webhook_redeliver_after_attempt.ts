import type { Migration } from '../migrate.js';

// A redelivery asked for while an attempt of the delivery is in flight no longer drops that attempt's lease
// (the worker would claim the delivery again at once: two attempts of one delivery together, and a
// merchant redelivering its hanging deliveries could hold every slot past the per-endpoint and
// per-organization caps). The request is noted here instead and applied when the running attempt finishes
// (repository.ts requeue, finishAttempt). Idempotent.
export default {
  version: '0035_webhook_redeliver_after_attempt',
  sql: `
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS redeliver_requested boolean NOT NULL DEFAULT false;
`,
} satisfies Migration;
