/**
 * listPayments (issue 15): the organization's payments newest first in the retrieval shape, by
 * merchant_order_id (Yuno's lookup: an order may have several payments), status, customer and created
 * range, with the same cursor paging as the other lists.
 */
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import { toApiPayment } from './mapper.js';
import { paymentsRepository as repo } from './repository.js';
import { pageOf } from '../http/paging.js';

export interface PaymentQuery {
  merchantOrderId?: string;
  status?: string;
  customerId?: string;
  createdGte?: string;
  createdLt?: string;
  limit: number;
  startingAfter?: string;
}

export type ListPaymentsResult = { kind: 'ok'; value: Schemas['PaymentList'] } | { kind: 'invalid'; errors: FieldError[] };

export async function listPayments(db: Queryable, organizationId: string, q: PaymentQuery): Promise<ListPaymentsResult> {
  if (q.startingAfter !== undefined && !(await repo.paymentExists(db, organizationId, q.startingAfter))) {
    return { kind: 'invalid', errors: [{ path: '/query/starting_after', message: 'is not a cursor of this list' }] };
  }
  const filter = {
    merchantOrderId: q.merchantOrderId ?? null,
    status: q.status ?? null,
    customerId: q.customerId ?? null,
    createdGte: q.createdGte ?? null,
    createdLt: q.createdLt ?? null,
  };
  const rows = await repo.listPaymentsWithTransactions(db, organizationId, filter, q.limit + 1, q.startingAfter ?? null);
  const { items, ...paging } = pageOf(rows, q.limit, (r) => r.payment.id);
  return { kind: 'ok', value: { payments: items.map((r) => toApiPayment(r.payment, r.transactions, null, { rawResponse: false })), ...paging } };
}
