/** A customer request that sends every field CreateCustomerRequest accepts (customers.test.ts checks it does). */
import type { Schemas } from '@payorch/types';

export const fullCustomer = (merchantCustomerId = 'cus-000123') =>
  ({
    merchant_customer_id: merchantCustomerId,
    merchant_customer_created_at: '2026-11-01T10:20:30.123456Z',
    first_name: 'Maria',
    last_name: 'Silva',
    gender: 'F',
    date_of_birth: '1990-02-28',
    email: 'maria.silva@example.com',
    nationality: 'BR',
    country: 'BR',
    document: { document_type: 'CPF', document_number: '38799922045' },
    phone: { number: '11987654321', country_code: '55' },
    billing_address: { address_line_1: 'Rua Augusta 1500', country: 'BR', state: 'SP', city: 'São Paulo', zip_code: '01304-001' },
    shipping_address: { address_line_1: 'Rua Augusta 1500', country: 'BR', state: 'SP', city: 'São Paulo', zip_code: '01304-001' },
    metadata: [{ key: 'segment', value: 'gold' }],
  }) satisfies Schemas['CreateCustomerRequest'];
