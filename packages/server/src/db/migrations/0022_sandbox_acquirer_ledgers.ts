import type { Migration } from '../migrate.js';

// The sandbox acquirers' ledgers (issue 22 §6), in the service's database so that an authorization made
// before a restart can still be captured, voided, refunded and looked up after it. One row per reference
// an acquirer has seen: an operation (with the answer first sent, replayed for a repeated reference), or a
// tombstone (id NULL: a lookup found nothing, and the reference is refused from then on). The primary key
// is what makes a reference idempotent across concurrent calls (INSERT … ON CONFLICT DO NOTHING);
// (acquirer, id) is what follow-ups name. Never a card number or security code: the answer holds the
// BIN and last four digits as the acquirers send them, fails_on the card's behaviour for follow-ups.
// `answer` is JSON as text, not jsonb: the odd_values fault answers with characters jsonb refuses (\u0000,
// a lone surrogate). Idempotent (IF NOT EXISTS).
export default {
  version: '0022_sandbox_acquirer_ledgers',
  sql: `
CREATE TABLE IF NOT EXISTS sandbox_acquirer_transactions (
  acquirer text NOT NULL CHECK (acquirer IN ('SANDBOX_A', 'SANDBOX_B')),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  seq bigint GENERATED ALWAYS AS IDENTITY,
  id text,
  kind text CHECK (kind IN ('VERIFY', 'PURCHASE', 'AUTHORIZE', 'CAPTURE', 'VOID', 'REFUND')),
  status text CHECK (status IN ('APPROVED', 'DECLINED', 'ERROR', 'VOIDED')),
  amount_value text,
  currency text,
  payment_id text,
  target_id text,
  http_status integer,
  answer text,
  held boolean NOT NULL DEFAULT false,
  fails_on text CHECK (fails_on IN ('CAPTURE', 'REFUND')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (acquirer, reference),
  CHECK ((id IS NULL) = (kind IS NULL) AND (id IS NULL) = (answer IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS sandbox_acquirer_transactions_id_key ON sandbox_acquirer_transactions (acquirer, id) WHERE id IS NOT NULL;
`,
} satisfies Migration;
