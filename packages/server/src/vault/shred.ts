/**
 * Shredding a vaulted method (unenroll, customer deletion; docs/design.md, card vault security). In the
 * caller's transaction: the method becomes UNENROLLED with its card-derived and personal fields cleared,
 * its data key row is deleted (the ciphertext, and every copy of it, no longer opens), and the copies other
 * records keep are redacted in place: the method's enrollment events, the payments made with the card (their
 * method snapshots, transactions and payment events: holder name and fingerprint) and stored idempotent
 * replies. After the commit, pruneDeadRows removes the dead version of the key row. Rows are locked in the one
 * order of payments/lock-order.ts (the customer, its methods, then their payments and copies).
 */
import type { Queryable } from '../db/database.js';
import { vaultCopiesRepository as copies } from './copies-repository.js';
import { recordUnenrolled } from './events.js';
import { toApiPaymentMethod } from './mapper.js';
import { paymentMethodsRepository as repo, type PaymentMethodRow } from './repository.js';

/** Fields of a payment's card_data cleared when its card is shredded; brand, IIN, last 4, length and expiry stay (accounting, disputes). */
const PAYMENT_CARD_FIELDS = ['holder_name', 'fingerprint'] as const;

/** Clears PAYMENT_CARD_FIELDS in every `card_data` object inside `value` (in place); true when something changed. */
export function redactPaymentCardData(value: unknown): boolean {
  if (Array.isArray(value)) return value.map(redactPaymentCardData).some(Boolean);
  if (value === null || typeof value !== 'object') return false;
  let changed = false;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'card_data' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const card = v as Record<string, unknown>;
      for (const f of PAYMENT_CARD_FIELDS) {
        if (card[f] !== undefined && card[f] !== null) {
          card[f] = null;
          changed = true;
        }
      }
    } else if (redactPaymentCardData(v)) {
      changed = true;
    }
  }
  return changed;
}

/**
 * A payment's card data as its row says it now: PAYMENT_CARD_FIELDS a shred cleared in the stored method
 * (`stored`, a payment's payment_method) are cleared in `cardData` (in place). Phase C of a payment writes
 * its method again from memory: a shred that committed during the provider call (its customer deleted, its
 * card unenrolled) must not be undone by it.
 */
export function keepRedactions(stored: unknown, cardData: Record<string, unknown>): void {
  const card = (stored as { payment_method_detail?: { card?: { card_data?: Record<string, unknown> | null } | null } | null } | null)?.payment_method_detail?.card?.card_data;
  if (!card) return;
  for (const f of PAYMENT_CARD_FIELDS) if (card[f] === null) cardData[f] = null;
}

/** An EnrolledPaymentMethod copy (event data, stored reply) made to say what the shredded method says now. */
function redactMethodCopy(copy: unknown, shredded: Pick<Record<string, unknown>, 'card_data' | 'description'>): boolean {
  if (copy === null || typeof copy !== 'object') return false;
  const m = copy as Record<string, unknown>;
  if (m.card_data === shredded.card_data && m.description === shredded.description) return false;
  m.card_data = shredded.card_data;
  m.description = shredded.description;
  return true;
}

export interface ShredScope {
  organizationId: string;
  customerId: string;
  /** One method; absent: every method of the customer (customer deletion), and all its payments. */
  vaultedToken?: string;
  baseUrl: string;
  now: Date;
}

/** Returns the methods that became UNENROLLED (each announced as enrollment.unenrolled, already redacted). */
export async function shredPaymentMethods(tx: Queryable, scope: ShredScope): Promise<PaymentMethodRow[]> {
  const { organizationId, customerId, vaultedToken, baseUrl, now } = scope;
  const changed = await repo.unenroll(tx, organizationId, customerId, vaultedToken);
  await repo.destroyDataKeys(tx, organizationId, customerId, vaultedToken);
  for (const method of changed) await recordUnenrolled(tx, method, baseUrl, now);
  // An unenroll that changed nothing has nothing to redact; a customer deletion still redacts its payments
  // (raw-card ones too, and after earlier unenrolls).
  if (changed.length === 0 && vaultedToken !== undefined) return changed;

  // Enrollment events of the methods (enrolled, declined, unenrolled): the card data as it is now (none).
  const shredded = new Map(changed.map((m) => [m.vaulted_token, toApiPaymentMethod(m, baseUrl, now)]));
  for (const e of await copies.eventsOf(tx, organizationId, [...shredded.keys()])) {
    const data = e.data as { payment_method?: unknown };
    if (redactMethodCopy(data.payment_method, shredded.get(e.resource_id)!)) await copies.replaceEventData(tx, e.id, data);
  }

  // Payments made with the card: by its token, or (vault_on_success, which keeps no token) by its fingerprint;
  // every payment of the customer when the customer is deleted.
  const fingerprints = new Set(changed.map((m) => m.old_fingerprint).filter((f): f is string => f !== null));
  const ofCard = (pm: unknown): boolean => {
    const text = JSON.stringify(pm ?? null);
    return [...shredded.keys()].some((t) => text.includes(`"${t}"`)) || [...fingerprints].some((f) => text.includes(`"${f}"`));
  };
  const payments = (await copies.paymentsOfCustomer(tx, organizationId, customerId)).filter((p) => vaultedToken === undefined || ofCard(p.payment_method));
  for (const p of payments) if (redactPaymentCardData(p.payment_method)) await copies.replacePaymentMethod(tx, p.id, p.payment_method);
  const paymentIds = payments.map((p) => p.id);
  for (const t of await copies.transactionsOf(tx, paymentIds)) if (redactPaymentCardData(t.payment_method)) await copies.replaceTransactionMethod(tx, t.id, t.payment_method);
  for (const e of await copies.eventsOf(tx, organizationId, paymentIds)) if (redactPaymentCardData(e.data)) await copies.replaceEventData(tx, e.id, e.data);

  // Stored replies (for 24 hours) to the enrollment and to the payments: the same redactions.
  for (const r of await copies.repliesMentioning(tx, organizationId, [...shredded.keys(), ...paymentIds])) {
    const body = r.response_body as Record<string, unknown> | null;
    const asMethod = body && typeof body.vaulted_token === 'string' && 'card_data' in body ? shredded.get(body.vaulted_token) : undefined;
    const changedReply = asMethod ? redactMethodCopy(body, asMethod) : redactPaymentCardData(body);
    if (changedReply) await copies.replaceReply(tx, organizationId, r.idempotency_key, body);
  }
  return changed;
}
