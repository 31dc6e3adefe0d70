/**
 * Idempotency (docs/design.md §4), one mechanism for every operation whose spec declares X-Idempotency-Key,
 * in one of two modes (`idempotencyModeOf`).
 *
 * Atomic mode (every operation that calls no provider): everything happens in ONE database transaction: a
 * transaction-scoped advisory lock on (organization, key) — a second request with the key while the first
 * is running gets 409 REQUEST_IN_PROCESS instead of waiting —, the lookup of a stored reply, the operation
 * itself, and the stored reply. So after a crash there is both the effect and the record, or neither,
 * across any number of server processes on one database. A business 4xx rolls the operation's writes back
 * (savepoint) but is stored, so a retry gets the same answer; a throw (500/503) stores nothing and a retry
 * can succeed.
 *
 * Deferred mode (operations that call a provider, which must happen outside any transaction): see
 * runDeferred. The key is claimed first (a PENDING record), the operation runs its own short
 * transactions and binds the record to what it created in the first of them, and the reply is stored when
 * it returns. A crash in between leaves a bound PENDING record that the resource's recoverer completes
 * from the database once the resource is settled (reconciliation settles what a crash left in flight).
 * The operations that write before any provider call (CLAIMED_ON_BIND: payments and their follow-ups)
 * claim in their own first transaction and store the reply in the one that settles them: two commits
 * per operation (runClaimingOnBind; docs/design.md §4 "Claim on bind").
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { problem, ProblemError, ProblemFailure, type ProblemReply } from '../http/problems.js';
import type { Reply } from '../http/send.js';
import { watchingProviderCalls } from '../platform/request-scope.js';
import { idempotencyRepository as repo, type StoredRecord } from './repository.js';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * How long an unbound PENDING claim belongs to its claimer: a claimer that has not bound the record (written
 * anything) within this time is taken to be dead, and a retry with the key takes the claim over. Generous
 * against the few milliseconds a live claimer needs between claim and bind (validation, one transaction).
 */
export const DEFERRED_CLAIM_LEASE_SECONDS = 60;

/**
 * The operations that call a provider: their provider calls happen outside any database transaction, so
 * they run in deferred mode. ONE list. createPayment binds 'payment:<id>' (payments/create-payment.ts);
 * capture, cancel, refund and cancel-or-refund bind 'transaction:<id>' of the follow-up they reserve
 * (payments/lifecycle.ts); enrollment binds 'payment_method:<token>' (its verify call, vault/service.ts).
 */
export const DEFERRED_OPERATIONS: ReadonlySet<string> = new Set([
  'createPayment',
  'capturePayment',
  'cancelPayment',
  'refundPayment',
  'cancelOrRefundPayment',
  'enrollPaymentMethod',
]);

/**
 * The deferred operations that write (bind) before any provider call: their key is claimed in the
 * operation's own first transaction, bound at once (issue 26: two commits per payment, the claim riding in
 * phase A), instead of in a transaction of its own first. Enrollment calls its provider (verify) before it
 * writes anything, so it claims first: a concurrent retry must not verify the card a second time.
 */
export const CLAIMED_ON_BIND: ReadonlySet<string> = new Set(['createPayment', 'capturePayment', 'cancelPayment', 'refundPayment', 'cancelOrRefundPayment']);

export type IdempotencyMode = 'atomic' | 'deferred';

export function idempotencyModeOf(operationId: string): IdempotencyMode {
  return DEFERRED_OPERATIONS.has(operationId) ? 'deferred' : 'atomic';
}

/** The reply idempotency stores and replays: http's (http/send.ts). */
export type { Reply };

export interface IdempotentRequest {
  organizationId: string;
  key: string;
  operationId: string;
  /** method + path + canonical body: what must be equal for a replay. */
  fingerprint: string;
}

/**
 * The request fingerprint: method, concrete path (ids included) and canonical JSON of the body, under a
 * keyed MAC. Bodies can hold a PAN and a security code (enrollment, raw-card payments); a plain hash of
 * them would be brute-forceable (PCI DSS 3.5.1.1), so the stored fingerprint is keyed by `mac`.
 */
export function fingerprintOf(method: string, path: string, body: unknown, mac: (data: string) => string): string {
  const hash = createHash('sha256').update(`${method.toUpperCase()} ${path}\n`);
  writeCanonicalJson(body, (piece) => hash.update(piece));
  return mac(hash.digest('hex'));
}

/** JSON with object keys sorted at every level, so key order does not change the fingerprint. */
export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonicalJson(value, (piece) => pieces.push(piece));
  return pieces.join('');
}

/**
 * Anything but printable ASCII without quote and backslash: a string free of these is what JSON.stringify
 * leaves as it is (one simple character class scans a 1.4 MB evidence string in ~1 ms; the exact rule,
 * lone surrogates included, took three times that). The rest goes through JSON.stringify.
 */
const NOT_VERBATIM = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/**
 * canonicalJson in pieces, so a body with megabytes of evidence is hashed without building a second
 * copy of it as one string.
 */
function writeCanonicalJson(value: unknown, write: (piece: string) => void): void {
  if (typeof value === 'string' && !NOT_VERBATIM.test(value)) {
    write('"');
    write(value); // as JSON.stringify would, without copying megabytes of base64 evidence
    write('"');
  } else if (value === undefined || value === null || typeof value !== 'object') {
    write(value === undefined ? 'null' : JSON.stringify(value));
  } else if (Array.isArray(value)) {
    write('[');
    value.forEach((item, i) => {
      if (i > 0) write(',');
      writeCanonicalJson(item, write);
    });
    write(']');
  } else {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    write('{');
    entries.forEach(([k, v], i) => {
      write(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      writeCanonicalJson(v, write);
    });
    write('}');
  }
}

function inProcess(): Reply {
  return problem('REQUEST_IN_PROCESS', 'A request with this X-Idempotency-Key is still being processed; retry later.', {
    headers: { 'Retry-After': '1' },
  }) as Reply;
}

function keyReused(): Reply {
  return problem(
    'IDEMPOTENCY_KEY_REUSED',
    'This X-Idempotency-Key was already used with a different request; use a new key for a new request.',
  ) as Reply;
}

function storedReply(stored: StoredRecord): Reply {
  return { status: stored.status_code!, body: stored.response_body ?? undefined, headers: stored.response_headers };
}

class RollBack extends Error {
  constructor(readonly reply: Reply) {
    super('roll back the operation, keep the reply');
  }
}

export async function runIdempotent(
  db: Database,
  request: IdempotentRequest,
  operation: (tx: Queryable) => Promise<Reply>,
): Promise<{ reply: Reply; replayed: boolean }> {
  return db.transaction(async (tx) => {
    if (!(await repo.tryLock(tx, request.organizationId, request.key))) return { reply: inProcess(), replayed: false };
    const stored = await repo.findLive(tx, request.organizationId, request.key);
    if (stored) {
      if (stored.fingerprint !== request.fingerprint) return { reply: keyReused(), replayed: false };
      // A PENDING claim here means the operation ran deferred (an older or newer version of this service).
      if (stored.state === 'PENDING') return { reply: inProcess(), replayed: false };
      return { reply: storedReply(stored), replayed: true };
    }

    let reply: Reply;
    try {
      reply = await tx.transaction(async (sp) => {
        const r = await operation(sp).catch((err: unknown) => {
          if (err instanceof ProblemError) return err.reply as ProblemReply as Reply;
          throw err;
        });
        if (r.status >= 400) throw new RollBack(r);
        return r;
      });
    } catch (err) {
      if (!(err instanceof RollBack)) throw err;
      reply = err.reply;
    }
    await repo.save(tx, {
      organizationId: request.organizationId,
      key: request.key,
      fingerprint: request.fingerprint,
      operationId: request.operationId,
      status: reply.status,
      headers: reply.headers ?? {},
      body: reply.body,
      ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
    });
    return { reply, replayed: false };
  });
}

/**
 * What a deferred operation gets: `bind` ties the claimed record to the resource the operation creates,
 * in the transaction that creates it (so the record and the resource exist together, or neither).
 */
export interface IdempotencyBinding {
  /**
   * Binds the record to `resource` ('<type>:<id>', e.g. 'payment:<id>'; the type names its recoverer).
   * Throws when the claim is no longer this request's (taken over after its lease ran out): the caller's
   * transaction then rolls back, so the resource is not created twice.
   */
  bind(tx: Queryable, resource: string): Promise<void>;
  /**
   * Stores the operation's final reply in the caller's transaction (the one that settles the resource), so
   * the reply costs no commit of its own; the reply the operation returns must be this one. Absent where
   * nothing is bound (NO_BINDING).
   */
  complete?(tx: Queryable, reply: Reply): Promise<void>;
}

/** For operations that run without a claim (atomic mode, or no key): binding has nothing to do. */
export const NO_BINDING: IdempotencyBinding = { bind: async () => {} };

/**
 * Builds the final reply of a deferred operation from the database, for a retry that finds the record
 * bound but without a reply (the claimer crashed, or is still running): null while the resource is not
 * settled (the retry gets 409 REQUEST_IN_PROCESS and tries again later).
 */
export type Recoverer = (db: Queryable, target: { organizationId: string; operationId: string; id: string }) => Promise<Reply | null>;

/** Recoverers by resource type (the part of the bound resource before the first ':'). */
export type Recoverers = Readonly<Record<string, Recoverer>>;

/**
 * Thrown by a deferred operation whose reply must not be stored (a provider that did not answer): `reply`
 * is answered now. Bound (something was written, its outcome unknown): the record stays PENDING, so a
 * retry with the key gets 409 REQUEST_IN_PROCESS until the resource is settled, then the recoverer's
 * settled reply. Unbound (nothing was written): the claim is released and a retry runs the request again.
 */
export class UnsettledReply extends Error {
  constructor(readonly reply: Reply) {
    super('the operation is not settled yet; answer now, keep the idempotency record pending');
    this.name = 'UnsettledReply';
  }
}

export class ClaimLostError extends Error {
  constructor() {
    super('the idempotency claim was taken over by another request; this request must not create anything');
    this.name = 'ClaimLostError';
  }
}

type Claim = { kind: 'claimed'; claimId: string } | { kind: 'answered'; reply: Reply; replayed: boolean };

/**
 * Deferred mode. 1. Claim the key in its own short transaction (a PENDING record: fingerprint, operation,
 * no resource). 2. Run the operation with the binding; it opens its own short transactions and binds the
 * record in the first one. 3. Store its reply (COMPLETE).
 *
 * A second request with the key finds: a COMPLETE record → its reply, replayed; a PENDING bound record →
 * the resource's recoverer builds the final reply from the database (stored, then replayed) or, while the
 * resource is unsettled, 409 REQUEST_IN_PROCESS; a PENDING unbound record older than the lease (its
 * claimer died before writing anything) → the claim is taken over and the operation runs; younger → 409.
 * The fingerprint rules are the atomic mode's. A business 4xx is stored like any reply (the operation
 * returns it before committing anything). A throw before binding gives the claim back (a retry runs at
 * once, as in atomic mode); after binding the record stays PENDING and a retry recovers it. A throw after
 * the operation called a provider is answered settle-later (UnrecordedOutcomeError), never as "nothing
 * happened"; a reply that cannot be stored is still answered (a retry recovers it from the resource).
 */
export async function runDeferred(
  db: Database,
  request: IdempotentRequest,
  recoverers: Recoverers,
  operation: (binding: IdempotencyBinding) => Promise<Reply>,
  options: { leaseSeconds?: number; claimOnBind?: boolean } = {},
): Promise<{ reply: Reply; replayed: boolean; notStored?: unknown }> {
  const { organizationId, key } = request;
  const leaseSeconds = options.leaseSeconds ?? DEFERRED_CLAIM_LEASE_SECONDS;
  // Claim on bind: one read decides. A key nobody has used runs the operation at once; a stored reply is
  // final (replayed, or 422 for another request) without a transaction; a PENDING record goes the claiming
  // way below (recovery, 409, or the takeover of a stale claim).
  if (options.claimOnBind) {
    const found = await repo.findLive(db, organizationId, key);
    if (!found) return runClaimingOnBind(db, request, operation);
    if (found.fingerprint !== request.fingerprint) return { reply: keyReused(), replayed: false };
    if (found.state === 'COMPLETE') return { reply: storedReply(found), replayed: true };
  }
  const claim = await db.transaction(async (tx): Promise<Claim> => {
    if (!(await repo.tryLock(tx, organizationId, key))) return { kind: 'answered', reply: inProcess(), replayed: false };
    const stored = await repo.findLive(tx, organizationId, key);
    const claimId = randomUUID();
    if (!stored) {
      await repo.claim(tx, { organizationId, key, fingerprint: request.fingerprint, operationId: request.operationId, claimId, ttlSeconds: IDEMPOTENCY_TTL_SECONDS });
      return { kind: 'claimed', claimId };
    }
    if (stored.fingerprint !== request.fingerprint) return { kind: 'answered', reply: keyReused(), replayed: false };
    if (stored.state === 'COMPLETE') return { kind: 'answered', reply: storedReply(stored), replayed: true };
    if (stored.resource !== null) {
      const recovered = await recover(tx, recoverers, organizationId, stored.operation_id, stored.resource);
      if (!recovered) return { kind: 'answered', reply: inProcess(), replayed: false };
      const reply = toStore(recovered);
      await repo.complete(tx, organizationId, key, null, reply);
      return { kind: 'answered', reply, replayed: true };
    }
    if ((stored.claim_age_seconds ?? 0) < leaseSeconds) return { kind: 'answered', reply: inProcess(), replayed: false };
    await repo.takeOver(tx, organizationId, key, claimId);
    return { kind: 'claimed', claimId };
  });
  if (claim.kind === 'answered') return { reply: claim.reply, replayed: claim.replayed };

  let completed = false;
  const binding: IdempotencyBinding = {
    async bind(tx, resource) {
      if (!(await repo.bind(tx, organizationId, key, claim.claimId, resource))) throw new ClaimLostError();
    },
    async complete(tx, reply) {
      completed = await repo.complete(tx, organizationId, key, claim.claimId, toStore(reply));
    },
  };
  const ran = await runWatched(operation, binding);
  if (!ran.ok) {
    const err = ran.error;
    // Unbound: nothing was written, so give the key back (best effort: the lease covers a failure here).
    // Bound: the resource exists; the record stays PENDING and a retry recovers the reply.
    // (release only deletes an unbound claim of this claimer: a bind rolled back with its transaction counts as unbound.)
    await repo.release(db, organizationId, key, claim.claimId).catch(() => {});
    // Another request took the claim over while this one was stalled past the lease: it owns the key now.
    if (err instanceof ClaimLostError) return { reply: inProcess(), replayed: false };
    // Bound and not settled: the answer for now; the record waits for the settled one.
    if (err instanceof UnsettledReply) return { reply: err.reply, replayed: false };
    // After a provider call any failure (database, pool, a bug in phase C) is settle-later: what the
    // provider did is recorded by the reconciliation (the attempt is PENDING with a deadline), and the key
    // then answers it (or, when nothing was bound, runs the request again).
    if (ran.providerCalled) throw new UnrecordedOutcomeError(err);
    throw err;
  }
  const reply = ran.value;
  if (completed) return { reply, replayed: false };
  try {
    await repo.complete(db, organizationId, key, claim.claimId, toStore(reply));
  } catch (err) {
    // The reply is the truth: answer it. Bound, a retry recovers it from the resource; unbound (nothing was
    // written), the claim is given back so a retry runs again (or, if that fails too, after the lease).
    await repo.release(db, organizationId, key, claim.claimId).catch(() => {});
    return { reply, replayed: false, notStored: err };
  }
  return { reply, replayed: false };
}

/**
 * Runs a deferred operation with its binding: a thrown ProblemError is its reply, and it is watched, so
 * once it has called a provider (money may have moved) no failure is "nothing happened".
 */
function runWatched(operation: (binding: IdempotencyBinding) => Promise<Reply>, binding: IdempotencyBinding) {
  return watchingProviderCalls(() =>
    operation(binding).catch((err: unknown) => {
      if (err instanceof ProblemError) return err.reply as ProblemReply as Reply;
      throw err;
    }),
  );
}

/**
 * Deferred mode with the claim on bind (CLAIMED_ON_BIND), for a key found unused: the operation runs with a
 * binding whose `bind` claims the key already bound to the resource in the operation's first transaction
 * (claimBound), and whose `complete` stores the reply in the transaction that settles it. Until that first
 * transaction commits nothing holds the key: two requests with one key both run their checks, one binds,
 * the other's transaction rolls back (ClaimLostError) before any provider call and it answers what the
 * record then says (the replay, 422 for a different request, or 409 while the first runs). A reply of an
 * operation that wrote nothing (a business 4xx) is stored unless the key got a record meanwhile; then it
 * is not answered either (its checks may have seen what the other request changed: a payment captured, a
 * refund in flight), the record is, as for a lost bind.
 */
async function runClaimingOnBind(
  db: Database,
  request: IdempotentRequest,
  operation: (binding: IdempotencyBinding) => Promise<Reply>,
): Promise<{ reply: Reply; replayed: boolean; notStored?: unknown }> {
  const { organizationId, key } = request;
  const claimId = randomUUID();
  let bound = false;
  let completed = false;
  const binding: IdempotencyBinding = {
    async bind(tx, resource) {
      const claimed = await repo.claimBound(tx, { ...request, claimId, resource, ttlSeconds: IDEMPOTENCY_TTL_SECONDS });
      if (!claimed) throw new ClaimLostError();
      bound = true; // (if the transaction rolls back after this, `complete` below finds no record: harmless)
    },
    async complete(tx, reply) {
      completed = await repo.complete(tx, organizationId, key, claimId, toStore(reply));
    },
  };
  const ran = await runWatched(operation, binding);
  if (!ran.ok) {
    const err = ran.error;
    if (err instanceof ClaimLostError) return answerFromRecord(db, request);
    if (err instanceof UnsettledReply) return { reply: err.reply, replayed: false };
    if (ran.providerCalled) throw new UnrecordedOutcomeError(err);
    throw err;
  }
  const reply = ran.value;
  if (completed) return { reply, replayed: false };
  try {
    if (bound) await repo.complete(db, organizationId, key, claimId, toStore(reply));
    // Nothing bound, and the key is another request's by now: this reply came from checks that may have
    // run against what that request changed (a second capture finds the payment captured, 409
    // INVALID_STATUS). It is not this request's answer: the key's is.
    else if (!(await repo.saveIfFree(db, { ...request, reply: toStore(reply), ttlSeconds: IDEMPOTENCY_TTL_SECONDS }))) return answerFromRecord(db, request);
  } catch (err) {
    return { reply, replayed: false, notStored: err };
  }
  return { reply, replayed: false };
}

/** What a request that lost the key to another one answers: that one's reply, 422 for another request, or 409 while it runs. */
async function answerFromRecord(db: Database, request: IdempotentRequest): Promise<{ reply: Reply; replayed: boolean }> {
  const stored = await repo.findLive(db, request.organizationId, request.key);
  if (stored && stored.fingerprint !== request.fingerprint) return { reply: keyReused(), replayed: false };
  if (stored?.state === 'COMPLETE') return { reply: storedReply(stored), replayed: true };
  return { reply: inProcess(), replayed: false };
}

/**
 * The settle-later answer to a failure after a provider call: 502 PROVIDER_UNAVAILABLE (its client
 * contract: the operation will be settled; retry with the same key to learn the outcome). Thrown so the
 * error middleware logs `cause` with the request, then answers `reply`.
 */
export class UnrecordedOutcomeError extends ProblemFailure {
  readonly reply: ProblemReply;
  readonly logMessage = 'the provider was called and its outcome could not be recorded: answered settle-later, reconciliation settles it';
  constructor(override readonly cause: unknown) {
    super('the provider was called, and its outcome could not be recorded: answered settle-later');
    this.name = 'UnrecordedOutcomeError';
    this.reply = problem(
      'PROVIDER_UNAVAILABLE',
      'The provider was called, but its outcome could not be recorded yet; the operation will be settled. Retry with the same X-Idempotency-Key to learn the outcome.',
      { headers: { 'Retry-After': '5' } },
    );
  }
}

async function recover(db: Queryable, recoverers: Recoverers, organizationId: string, operationId: string, resource: string): Promise<Reply | null> {
  const cut = resource.indexOf(':');
  const recoverer = recoverers[resource.slice(0, cut)];
  if (cut < 0 || !recoverer) throw new Error(`no idempotency recoverer for resource ${resource}`);
  return recoverer(db, { organizationId, operationId, id: resource.slice(cut + 1) });
}

function toStore(reply: Reply): Reply & { headers: Record<string, string> } {
  return { status: reply.status, headers: reply.headers ?? {}, body: reply.body };
}
