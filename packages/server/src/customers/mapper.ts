import type { Schemas } from '@payorch/types';
import { toIsoMicros } from '../db/database.js';
import type { CustomerRow } from './repository.js';

/** Storage row → API Customer (every field present, null when unknown). */
export function toApiCustomer(row: CustomerRow): Schemas['Customer'] {
  return {
    id: row.id,
    merchant_customer_id: row.merchant_customer_id,
    first_name: row.first_name,
    last_name: row.last_name,
    gender: row.gender,
    date_of_birth: row.date_of_birth,
    email: row.email,
    nationality: row.nationality,
    country: row.country,
    document: (row.document ?? null) as Schemas['Customer']['document'],
    phone: (row.phone ?? null) as Schemas['Customer']['phone'],
    billing_address: (row.billing_address ?? null) as Schemas['Customer']['billing_address'],
    shipping_address: (row.shipping_address ?? null) as Schemas['Customer']['shipping_address'],
    metadata: (row.metadata ?? []) as Schemas['Metadata'],
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
    merchant_customer_created_at: toIsoMicros(row.merchant_customer_created_at),
  };
}
