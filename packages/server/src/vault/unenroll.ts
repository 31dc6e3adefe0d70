/**
 * Reading one enrolled payment method and unenrolling it (issue 15, Yuno's paths). Unenrolling shreds the
 * method (shred.ts: its data key destroyed, its card-derived fields and their copies cleared) in the same
 * transaction as the status change and its enrollment.unenrolled event; a method already UNENROLLED is
 * answered as it is.
 */
import type { Schemas } from '@payorch/types';
import { customersRepository } from '../customers/repository.js';
import type { Queryable } from '../db/database.js';
import { problem, type ProblemReply } from '../http/problems.js';
import { toApiPaymentMethod } from './mapper.js';
import { paymentMethodsRepository as repo } from './repository.js';
import { shredPaymentMethods } from './shred.js';

export type MethodProblem = ProblemReply<'CUSTOMER_NOT_FOUND' | 'PAYMENT_METHOD_NOT_FOUND'>;
type Outcome = { ok: true; method: Schemas['EnrolledPaymentMethod'] } | { ok: false; problem: MethodProblem };

const methodNotFound = (token: string) => problem('PAYMENT_METHOD_NOT_FOUND', `The customer has no payment method ${token}.`);
const customerNotFound = (id: string) => problem('CUSTOMER_NOT_FOUND', `No customer with id ${id}.`);

export async function getPaymentMethod(db: Queryable, organizationId: string, customerId: string, token: string, baseUrl: string, now = new Date()): Promise<Outcome> {
  if (!(await customersRepository.find(db, organizationId, customerId))) return { ok: false, problem: customerNotFound(customerId) };
  const row = await repo.findForCustomer(db, organizationId, customerId, token);
  return row ? { ok: true, method: toApiPaymentMethod(row, baseUrl, now) } : { ok: false, problem: methodNotFound(token) };
}

export async function unenrollPaymentMethod(db: Queryable, organizationId: string, customerId: string, token: string, baseUrl: string, now = new Date()): Promise<Outcome> {
  return db.transaction(async (tx): Promise<Outcome> => {
    if (!(await customersRepository.find(tx, organizationId, customerId))) return { ok: false, problem: customerNotFound(customerId) };
    const [changed] = await shredPaymentMethods(tx, { organizationId, customerId, vaultedToken: token, baseUrl, now });
    if (changed) return { ok: true, method: toApiPaymentMethod(changed, baseUrl, now) };
    // Nothing changed: unknown, or already UNENROLLED (answered as it is, no second event).
    const row = await repo.findForCustomer(tx, organizationId, customerId, token);
    return row ? { ok: true, method: toApiPaymentMethod(row, baseUrl, now) } : { ok: false, problem: methodNotFound(token) };
  });
}
