/**
 * A sandbox acquirer's ledger: every operation it processed, under the caller's idempotency reference (a
 * repeated reference gets the first answer, never a second line) and its own operation id (follow-ups
 * name the charge they apply to). A reference looked up before it arrived is tombstoned: refused from
 * then on, so "not found" stays true.
 *
 * Where the lines live is a LedgerStore: memoryLedgers() (gone with the process: the standalone
 * acquirers of the tests, acquirers-main without DATABASE_URL) or sqlLedgers(db) (sql-ledger.ts: the
 * service's database, so an authorization outlives a restart). Each operation is atomic in both: the
 * reference check and the record are one step, and a follow-up reads its target and records in one
 * transaction (a capture never slips past a concurrent void).
 */

/**
 * An operation's state at the acquirer; VOIDED once an approval was voided (or a purchase reversed).
 * An asynchronous payment request is PENDING until the shopper pays (APPROVED), the acquirer refuses it
 * (DECLINED), its deadline passes (EXPIRED) or the shopper cancels it (CANCELED).
 */
export type LedgerStatus = 'APPROVED' | 'DECLINED' | 'ERROR' | 'VOIDED' | 'PENDING' | 'EXPIRED' | 'CANCELED';

/** How a PENDING payment request ends. */
export type PendingOutcome = 'APPROVED' | 'DECLINED' | 'EXPIRED' | 'CANCELED';
export type OperationKind = 'VERIFY' | 'PURCHASE' | 'AUTHORIZE' | 'CAPTURE' | 'VOID' | 'REFUND';
/** What the acquirer remembers of the card for follow-ups (test cards …0101, …0093): never the card itself. */
export type FailsOn = 'CAPTURE' | 'REFUND';

/** One ledger line as the control surface shows it: never a PAN. */
export interface LedgerEntry {
  reference: string;
  payment_id: string | null;
  kind: OperationKind;
  status: LedgerStatus;
  amount: { value: string; currency: string };
  /** The acquirer's id of the operation. */
  id: string;
  /** For captures, voids and refunds: the acquirer's id of the charge they apply to. */
  target_id: string | null;
  created_at: string;
}

/** An answer as first sent, replayed for a repeated reference. */
export interface Recorded {
  entry: LedgerEntry;
  httpStatus: number;
  body: Record<string, unknown>;
  /** The answer is held until the client gives up (or HOLD_MS), then sent late. */
  held: boolean;
  failsOn?: FailsOn;
  /** A payment request's deadline (ISO 8601): past it, it can no longer be paid. */
  expiresAt?: string;
}

/** What a reference holds when it is taken: the first answer, or a tombstone. */
export type Earlier = Recorded | 'TOMBSTONED';

/** What a follow-up reads of the charge it applies to. */
export interface FollowUpTarget {
  status: LedgerStatus;
  paymentId: string | null;
  failsOn?: FailsOn;
}

/** A follow-up decided against its target: the line to record, and whether it voids the target. */
export interface FollowUpDecision {
  line: Recorded;
  voidsTarget: boolean;
}

/** One acquirer's ledger. */
export interface Ledger {
  /** The line or tombstone under this reference, if any. */
  find(reference: string): Promise<Earlier | undefined>;
  /** Records `line` unless its reference is taken: undefined when recorded, else what holds the reference. */
  record(line: Recorded): Promise<Earlier | undefined>;
  /**
   * A follow-up of the charge `targetId`: `decide` makes its line from the target, recorded (and the
   * target voided when decided so) unless the line's reference is taken. 'NO_TARGET' when no such charge.
   */
  followUp(targetId: string, decide: (target: FollowUpTarget) => FollowUpDecision): Promise<Earlier | 'NO_TARGET' | undefined>;
  /** A lookup: the line under this reference; when there is none, the reference is tombstoned. */
  lookup(reference: string): Promise<Recorded | undefined>;
  /**
   * Ends a PENDING payment request (by the acquirer's id) with `outcome`, atomically; a payment past its
   * deadline is EXPIRED whatever was asked. The line's status after (unchanged when it was not PENDING),
   * or 'NO_TARGET' when the acquirer has no such operation.
   */
  settlePending(id: string, outcome: PendingOutcome): Promise<{ status: LedgerStatus; entry: LedgerEntry } | 'NO_TARGET'>;
  /** The odd_values fault: the line's answer and status replaced by what was sent instead. */
  rewrite(reference: string, status: LedgerStatus, body: Record<string, unknown>): Promise<void>;
  /** Every line, oldest first (tombstones are not operations). */
  entries(): Promise<LedgerEntry[]>;
  clear(): Promise<void>;
}

/** Where ledgers live: one per acquirer name. */
export interface LedgerStore {
  ledger(acquirer: string): Ledger;
}

/** Ledgers in this process's memory. */
export function memoryLedgers(): LedgerStore {
  const ledgers = new Map<string, Ledger>();
  return {
    ledger(acquirer) {
      let ledger = ledgers.get(acquirer);
      if (!ledger) ledgers.set(acquirer, (ledger = memoryLedger()));
      return ledger;
    },
  };
}

function memoryLedger(): Ledger {
  const byReference = new Map<string, Recorded>();
  const byId = new Map<string, Recorded>();
  const tombstones = new Set<string>();
  const find = (reference: string): Earlier | undefined => byReference.get(reference) ?? (tombstones.has(reference) ? 'TOMBSTONED' : undefined);
  const record = (line: Recorded): Earlier | undefined => {
    const earlier = find(line.entry.reference);
    if (earlier) return earlier;
    byReference.set(line.entry.reference, line);
    byId.set(line.entry.id, line);
    return undefined;
  };
  // Each method runs to its end without yielding: atomic like the SQL store's statements and transactions.
  return {
    find: async (reference) => find(reference),
    record: async (line) => record(line),
    async followUp(targetId, decide) {
      const target = byId.get(targetId);
      if (!target) return 'NO_TARGET';
      const { line, voidsTarget } = decide({ status: target.entry.status, paymentId: target.entry.payment_id, failsOn: target.failsOn });
      const earlier = record(line);
      if (!earlier && voidsTarget) target.entry.status = 'VOIDED';
      return earlier;
    },
    async settlePending(id, outcome) {
      const line = byId.get(id);
      if (!line) return 'NO_TARGET';
      if (line.entry.status === 'PENDING') {
        const late = outcome === 'APPROVED' && line.expiresAt !== undefined && Date.parse(line.expiresAt) <= Date.now();
        line.entry.status = late ? 'EXPIRED' : outcome;
      }
      return { status: line.entry.status, entry: line.entry };
    },
    async lookup(reference) {
      const earlier = find(reference);
      if (earlier === undefined) tombstones.add(reference);
      return earlier === 'TOMBSTONED' ? undefined : earlier;
    },
    async rewrite(reference, status, body) {
      const line = byReference.get(reference);
      if (!line) return;
      line.entry.status = status;
      line.body = body;
    },
    entries: async () => [...byReference.values()].map((r) => r.entry),
    async clear() {
      byReference.clear();
      byId.clear();
      tombstones.clear();
    },
  };
}
