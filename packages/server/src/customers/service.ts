import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import { toApiCustomer } from './mapper.js';
import { customersRepository as repo } from './repository.js';

export type CreateCustomerResult =
  | { kind: 'created'; customer: Schemas['Customer'] }
  | { kind: 'duplicate'; existingId: string };

/** Creates a customer; `merchant_customer_id` is unique per organization (also under concurrency). */
export async function createCustomer(db: Queryable, organizationId: string, input: Schemas['CreateCustomerRequest']): Promise<CreateCustomerResult> {
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
  const existingId = await repo.findIdByMerchantCustomerId(db, organizationId, input.merchant_customer_id);
  return { kind: 'duplicate', existingId: existingId ?? '' };
}
