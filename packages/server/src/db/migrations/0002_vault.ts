import type { Migration } from '../migrate.js';

// The card vault: enrolled payment methods (issue: card vault). Filled in by that work.
export default {
  version: '0002_vault',
  sql: `SELECT 1;`,
} satisfies Migration;
