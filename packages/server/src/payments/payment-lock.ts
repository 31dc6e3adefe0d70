/**
 * Work on one payment, one at a time, without a pooled connection per waiter (issue 21 finding 2): a
 * waiter on `SELECT … FOR UPDATE` holds a connection for as long as it waits, so a burst on one payment
 * used to drain the pool. Within a process the payment's work queues in memory (finishing work — after a
 * provider call — first); across processes the row lock is taken with NOWAIT and, when another process
 * holds it, the transaction is given back (its connection with it) and tried again shortly.
 *
 * The queue is the payment's, shared by its organization's requests and the work that follows a provider
 * call (which knows the payment is its own). A request naming a payment id while its queue is busy is
 * first checked to belong to the payment's organization (a plain read, no lock): another organization's
 * request, which would find no payment anyway, is answered from that read without joining the queue, so
 * naming someone else's payment id over and over never puts work in front of the owner's operations.
 */
import type { Queryable } from '../db/database.js';
import { ConcurrencyLimitedError, servedFirst } from '../db/organization-gate.js';
import { Admission } from '../platform/admission.js';
import { contextSlot } from '../platform/context-slots.js';
import { currentRequestScope } from '../platform/request-scope.js';
import { lockBeforePayment, type ParentsOf, type PaymentParents } from './lock-order.js';
import { paymentsRepository, type PaymentRow } from './repository.js';

const queues = new Map<string, Admission>();
/** The owner of a payment whose queue is in use, as its lock read it: its requests queue without a check. */
const owners = new Map<string, string>();
/** The payments whose queue this async work holds: re-entering runs at once (waiting would deadlock). */
const holding = contextSlot<ReadonlySet<string>>('payments held');

/** lock_not_available: NOWAIT found the row locked by another transaction. */
const LOCK_NOT_AVAILABLE = '55P03';
/** How long to keep trying when another process holds the payment. */
const CROSS_PROCESS_WAIT_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` in a transaction of `db` that holds the payment's row lock (FOR UPDATE, so the code inside
 * may lock it again at no cost). `organizationId`, when given, must own the payment: otherwise nothing
 * is locked and `fn` finds no payment itself. `locked` is the payment as the lock read it (undefined: no
 * such payment), so `fn` need not read it again; null when this work already held the payment (re-entry:
 * nothing was read here). `first`: what `fn` may write besides the payment (its customer, its vaulted
 * card), locked before it, in the order of lock-order.ts.
 */
export async function inPaymentTransaction<T>(
  db: Queryable,
  paymentId: string,
  organizationId: string | null,
  fn: (tx: Queryable, locked: { payment: PaymentRow | undefined } | null) => Promise<T>,
  first?: PaymentParents | ParentsOf,
): Promise<T> {
  if (holding.get()?.has(paymentId)) return db.transaction((tx) => fn(tx, null));
  let queue = queueOf(paymentId);
  if (!queue.tryAcquire()) {
    if (organizationId !== null && owners.get(paymentId) !== organizationId) {
      const notOwned = await unlessOwned(db, paymentId, organizationId, fn);
      if (notOwned) return notOwned.value;
      queue = queueOf(paymentId); // the one that was busy may have gone idle (and away) meanwhile
    }
    await queue.acquire(currentRequestScope()?.providerCalled ?? false);
  }
  try {
    // Others wait for this payment: its transaction goes ahead of the organization's other waiting work.
    return await holding.run(new Set([...(holding.get() ?? []), paymentId]), () =>
      servedFirst(() =>
        lockedTransaction(db, paymentId, organizationId, (tx, locked) => {
          if (locked.payment) owners.set(paymentId, locked.payment.organization_id);
          return fn(tx, locked);
        }, first),
      ),
    );
  } finally {
    queue.release();
    if (queue.idle) {
      queues.delete(paymentId);
      owners.delete(paymentId);
    }
  }
}

function queueOf(paymentId: string): Admission {
  let queue = queues.get(paymentId);
  if (!queue) queues.set(paymentId, (queue = new Admission(1)));
  return queue;
}

const OWNED = Symbol('owned');

/**
 * `fn` as it runs for a payment the organization does not own (`locked.payment` undefined: the lock,
 * scoped to the organization, would have found none), in a transaction of its own; undefined when the
 * organization owns the payment (then nothing ran: the caller queues).
 */
async function unlessOwned<T>(
  db: Queryable,
  paymentId: string,
  organizationId: string,
  fn: (tx: Queryable, locked: { payment: PaymentRow | undefined }) => Promise<T>,
): Promise<{ value: T } | undefined> {
  try {
    return await db.transaction(async (tx) => {
      if (await paymentsRepository.ownsPayment(tx, paymentId, organizationId)) throw OWNED;
      return { value: await fn(tx, { payment: undefined }) };
    });
  } catch (err) {
    if (err === OWNED) return undefined;
    throw err;
  }
}

async function lockedTransaction<T>(
  db: Queryable,
  paymentId: string,
  organizationId: string | null,
  fn: (tx: Queryable, locked: { payment: PaymentRow | undefined }) => Promise<T>,
  first: PaymentParents | ParentsOf | undefined,
): Promise<T> {
  const deadline = Date.now() + CROSS_PROCESS_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        // Waited for, not NOWAIT: what holds them (a shred, an enrollment's write, another settlement of the
        // card) is one short transaction with no provider call in it.
        if (first) await lockBeforePayment(tx, first);
        return fn(tx, { payment: await paymentsRepository.lockPaymentNowait(tx, paymentId, organizationId) });
      });
    } catch (err) {
      if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
      if (Date.now() >= deadline) throw new ConcurrencyLimitedError('payment busy');
      await sleep(Math.min(5 * 2 ** attempt, 50) * (0.5 + Math.random()));
    }
  }
}
