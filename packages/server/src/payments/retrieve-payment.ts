/**
 * getPayment: the retrieval shape with every transaction, optionally the raw provider responses and
 * the ordered status history, plus a strong ETag of exactly that representation.
 */
import { hash } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import { jsonOf } from '../http/serialized-json.js';
import { toApiPayment } from './mapper.js';
import { paymentsRepository as repo } from './repository.js';

export interface RetrievalFlags {
  rawResponse: boolean;
  transactionsHistory: boolean;
}

export async function retrievePayment(db: Queryable, organizationId: string, paymentId: string, flags: RetrievalFlags): Promise<Schemas['Payment'] | undefined> {
  const found = await repo.findPaymentWithTransactions(db, organizationId, paymentId);
  if (!found) return undefined;
  const { payment, transactions } = found;
  const history = flags.transactionsHistory ? await repo.listHistory(db, payment.id) : null;
  return toApiPayment(payment, transactions, history, { rawResponse: flags.rawResponse });
}

/**
 * A strong ETag of the representation: a hash of the exact JSON sent, and of the query flags that chose
 * the variant, so two variants of one payment never share a tag.
 */
export function etagOf(body: unknown, flags: RetrievalFlags): string {
  // One-shot hash: no Hash object per request (the read path's per-request cost, issue 26).
  const digest = hash('sha256', `raw_response=${flags.rawResponse}&transactions_history=${flags.transactionsHistory}\n${jsonOf(body as object)}`, 'base64url');
  return `"${digest}"`;
}
