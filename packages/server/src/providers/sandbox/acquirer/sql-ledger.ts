/**
 * The sandbox acquirers' ledgers in the service's database (ledger-repository.ts, migration 0022): what
 * an acquirer authorized before a restart is still there after it. Each call is one statement, or for a
 * follow-up one short transaction (its target locked, the line inserted, the target voided), never
 * spanning anything but SQL. A rewritten answer (the odd_values fault, whose odd values may hold a card
 * number or a key) is stored redacted: its replay shows [REDACTED] where the first answer had them.
 */
import { toIsoMicros, type Queryable } from '../../../db/database.js';
import { redactText } from '../../provider-values.js';
import { sandboxLedgerRepository as repo, type LedgerRow } from './ledger-repository.js';
import type { Earlier, Ledger, LedgerStore, Recorded } from './ledger.js';

export function sqlLedgers(db: Queryable): LedgerStore {
  return { ledger: (acquirer) => sqlLedger(db, acquirer) };
}

function sqlLedger(db: Queryable, acquirer: string): Ledger {
  const earlierAt = async (q: Queryable, reference: string): Promise<Earlier | undefined> => {
    const row = await repo.find(q, acquirer, reference);
    return row && recordedOf(row);
  };
  const insert = (q: Queryable, line: Recorded) =>
    repo.insert(q, acquirer, {
      reference: line.entry.reference,
      id: line.entry.id,
      kind: line.entry.kind,
      status: line.entry.status,
      amountValue: line.entry.amount.value,
      currency: line.entry.amount.currency,
      paymentId: line.entry.payment_id,
      targetId: line.entry.target_id,
      httpStatus: line.httpStatus,
      answer: JSON.stringify(line.body),
      held: line.held,
      failsOn: line.failsOn ?? null,
      createdAt: line.entry.created_at,
      expiresAt: line.expiresAt ?? null,
    });
  return {
    find: (reference) => earlierAt(db, reference),
    async record(line) {
      // The common case in one statement; a taken reference costs a second read.
      return (await insert(db, line)) ? undefined : earlierAt(db, line.entry.reference);
    },
    followUp(targetId, decide) {
      return db.transaction(async (tx) => {
        const target = await repo.lockTarget(tx, acquirer, targetId);
        if (!target || target.status === null) return 'NO_TARGET' as const;
        const { line, voidsTarget } = decide({ status: target.status, paymentId: target.payment_id, ...(target.fails_on ? { failsOn: target.fails_on } : {}) });
        if (!(await insert(tx, line))) return earlierAt(tx, line.entry.reference);
        if (voidsTarget) await repo.setStatus(tx, acquirer, targetId, 'VOIDED');
        return undefined;
      });
    },
    async settlePending(id, outcome) {
      const row = await repo.settlePending(db, acquirer, id, outcome);
      if (!row) return 'NO_TARGET';
      const recorded = recordedOf(row) as Recorded;
      return { status: recorded.entry.status, entry: recorded.entry };
    },
    async lookup(reference) {
      if (await repo.tombstone(db, acquirer, reference)) return undefined;
      const earlier = await earlierAt(db, reference);
      return earlier === 'TOMBSTONED' ? undefined : earlier;
    },
    async rewrite(reference, status, body) {
      await repo.rewrite(db, acquirer, reference, status, JSON.stringify(redacted(body)));
    },
    entries: async () => (await repo.list(db, acquirer)).map((row) => (recordedOf(row) as Recorded).entry),
    clear: () => repo.clear(db, acquirer),
  };
}

function recordedOf(row: LedgerRow): Earlier {
  if (row.id === null || row.kind === null || row.status === null || row.answer === null) return 'TOMBSTONED';
  return {
    entry: {
      reference: row.reference,
      payment_id: row.payment_id,
      kind: row.kind,
      status: row.status,
      amount: { value: row.amount_value ?? '', currency: row.currency ?? '' },
      id: row.id,
      target_id: row.target_id,
      created_at: toIsoMicros(row.created_at),
    },
    httpStatus: row.http_status ?? 200,
    body: JSON.parse(row.answer) as Record<string, unknown>,
    held: row.held,
    ...(row.fails_on ? { failsOn: row.fails_on } : {}),
    ...(row.expires_at ? { expiresAt: toIsoMicros(row.expires_at) } : {}),
  };
}

/** A copy with every key and string passed through redactText (card numbers, keys, tokens masked). */
function redacted(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redacted);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k), redacted(v)]));
  return value;
}
