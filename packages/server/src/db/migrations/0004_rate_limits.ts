import type { Migration } from '../migrate.js';

// Fixed-window request counters per organization, shared by every instance on one database.
export default {
  version: '0004_rate_limits',
  sql: `
CREATE TABLE rate_limit_windows (
  bucket text NOT NULL,
  window_index bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (bucket, window_index)
);
`,
} satisfies Migration;
