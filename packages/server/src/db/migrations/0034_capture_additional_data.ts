import type { Migration } from '../migrate.js';

// A capture's `additional_data` (Yuno's airline capture: the itinerary) completes the payment's only when
// the capture is approved: phase A keeps it on the reserved CAPTURE transaction, and whoever settles the
// capture approved (the request's phase C, the reconciliation, a provider notification) merges it into the
// payment (payments/lifecycle.ts). It was merged in phase A, so a refused capture changed the payment.
// Idempotent (IF NOT EXISTS).
export default {
  version: '0034_capture_additional_data',
  sql: `
ALTER TABLE payment_transactions ADD COLUMN IF NOT EXISTS additional_data json;
`,
} satisfies Migration;
