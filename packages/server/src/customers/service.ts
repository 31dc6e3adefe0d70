import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import { customerEtag, ifMatchHits } from './etag.js';
import { toApiCustomer } from './mapper.js';
import type { CustomerPaymentMethods } from './payment-methods-port.js';
import { customersRepository as repo, type CustomerChanges } from './repository.js';
import { pageOf } from '../http/paging.js';

export type CreateCustomerResult =
  | { kind: 'created'; customer: Schemas['Customer'] }
  | { kind: 'duplicate'; existingId: string };

/** Creates a customer; `merchant_customer_id` is unique per organization (also under concurrency). */
export async function createCustomer(db: Queryable, organizationId: string, input: Schemas['CreateCustomerRequest']): Promise<CreateCustomerResult> {
  // The customer holding the id may be deleted between the conflict and its lookup (its id then names nobody,
  // and existing_customer_id must be one): the insert is tried again, once; the id is free then.
  for (let tries = 0; ; tries++) {
    const result = await tryCreateCustomer(db, organizationId, input);
    if (result.kind === 'created') return result;
    if (result.existingId !== undefined) return { kind: 'duplicate', existingId: result.existingId };
    if (tries >= 1) throw new Error(`merchant_customer_id of organization ${organizationId} conflicted twice with no live customer holding it`);
  }
}

async function tryCreateCustomer(
  db: Queryable,
  organizationId: string,
  input: Schemas['CreateCustomerRequest'],
): Promise<{ kind: 'created'; customer: Schemas['Customer'] } | { kind: 'duplicate'; existingId: string | undefined }> {
  const row = await repo.insert(db, {
    id: randomUUID(),
    organization_id: organizationId,
    merchant_customer_id: input.merchant_customer_id,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    gender: input.gender ?? null,
    date_of_birth: input.date_of_birth ?? null,
    email: input.email ?? null,
    nationality: input.nationality ?? null,
    country: input.country ?? null,
    document: input.document ?? null,
    phone: input.phone ?? null,
    billing_address: input.billing_address ?? null,
    shipping_address: input.shipping_address ?? null,
    metadata: input.metadata ?? [],
    merchant_customer_created_at: input.merchant_customer_created_at ?? null,
  });
  if (row) return { kind: 'created', customer: toApiCustomer(row) };
  return { kind: 'duplicate', existingId: await repo.findIdByMerchantCustomerId(db, organizationId, input.merchant_customer_id) };
}

/** A customer with its ETag, or undefined when unknown, deleted or another organization's. */
export async function getCustomer(
  db: Queryable,
  organizationId: string,
  by: { id: string } | { merchantCustomerId: string },
): Promise<{ customer: Schemas['Customer']; etag: string } | undefined> {
  const row = 'id' in by ? await repo.find(db, organizationId, by.id) : await repo.findByMerchantCustomerId(db, organizationId, by.merchantCustomerId);
  if (!row) return undefined;
  const customer = toApiCustomer(row);
  return { customer, etag: customerEtag(customer) };
}

export type ListCustomersResult = { kind: 'ok'; value: Schemas['CustomerList'] } | { kind: 'invalid'; errors: FieldError[] };

/**
 * listCustomers (issue 15): the organization's live customers newest first, created range, with the same
 * cursor paging as the other lists. A cursor must be a customer of the organization, but may have been
 * deleted since its page was read: its row keeps created_at and id, so a walk that deletes as it goes
 * (or races another deletion) continues where it was instead of failing.
 */
export async function listCustomers(
  db: Queryable,
  organizationId: string,
  q: { createdGte?: string; createdLt?: string; limit: number; startingAfter?: string },
): Promise<ListCustomersResult> {
  if (q.startingAfter !== undefined && !(await repo.existsInOrganization(db, organizationId, q.startingAfter))) {
    return { kind: 'invalid', errors: [{ path: '/query/starting_after', message: 'is not a cursor of this list' }] };
  }
  const filter = { createdGte: q.createdGte ?? null, createdLt: q.createdLt ?? null };
  const rows = await repo.list(db, organizationId, filter, q.limit + 1, q.startingAfter ?? null);
  const { items, ...paging } = pageOf(rows, q.limit, (c) => c.id);
  return { kind: 'ok', value: { customers: items.map(toApiCustomer), ...paging } };
}

export type UpdateCustomerResult =
  | { kind: 'updated'; customer: Schemas['Customer']; etag: string }
  | { kind: 'not_found' }
  | { kind: 'stale' }
  | { kind: 'duplicate'; existingId: string };

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown) => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;

/**
 * Partial update in one transaction: the row is locked, compared with If-Match, then written. A field
 * absent from the body stays; `null` clears it (metadata: the empty list).
 */
export async function updateCustomer(
  db: Queryable,
  organizationId: string,
  id: string,
  input: Schemas['UpdateCustomerRequest'],
  ifMatch: string | undefined,
): Promise<UpdateCustomerResult> {
  return db.transaction(async (tx) => {
    const current = await repo.findForUpdate(tx, organizationId, id);
    if (!current) return { kind: 'not_found' };
    if (ifMatch !== undefined && !ifMatchHits(ifMatch, customerEtag(toApiCustomer(current)))) return { kind: 'stale' };

    const wanted = input.merchant_customer_id;
    if (wanted !== undefined && wanted !== current.merchant_customer_id) {
      const holder = await repo.findIdByMerchantCustomerId(tx, organizationId, wanted);
      if (holder) return { kind: 'duplicate', existingId: holder };
    }
    const changes: CustomerChanges = { ...input } as CustomerChanges;
    // The customer that took the id may be deleted between the conflict and its lookup (existing_customer_id
    // must name a live one): the update is tried again, once; the id is free then.
    for (let tries = 0; ; tries++) {
      try {
        // A savepoint: a concurrent create or update that took the id first fails only this statement.
        const row = await tx.transaction((sp) => repo.update(sp, organizationId, id, changes));
        if (!row) return { kind: 'not_found' };
        const customer = toApiCustomer(row);
        return { kind: 'updated', customer, etag: customerEtag(customer) };
      } catch (err) {
        if (!isUniqueViolation(err) || wanted === undefined || tries >= 1) throw err;
        const holder = await repo.findIdByMerchantCustomerId(tx, organizationId, wanted);
        if (holder) return { kind: 'duplicate', existingId: holder };
      }
    }
  });
}

/**
 * Deletes a customer in one transaction: the row is marked deleted with its personal data cleared, and
 * every payment method of it is shredded by the vault (`paymentMethods`, vault/shred.ts: data key destroyed,
 * card-derived fields cleared, enrollment.unenrolled) with the card copies of its payments redacted.
 * Payments keep their own snapshot of the payer. False when there was no live customer.
 */
export async function deleteCustomer(
  db: Queryable,
  paymentMethods: CustomerPaymentMethods,
  organizationId: string,
  id: string,
  baseUrl: string,
  now = new Date(),
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!(await repo.markDeleted(tx, organizationId, id))) return false;
    // Every method shredded (each not unenrolled yet announced as enrollment.unenrolled), and the card copies
    // of all the customer's payments redacted.
    await paymentMethods.shredAll(tx, { organizationId, customerId: id, baseUrl, now });
    return true;
  });
}
