import type { Queryable } from '../db/database.js';

/** A customers row as stored (jsonb columns come back parsed). */
export interface CustomerRow {
  id: string;
  organization_id: string;
  merchant_customer_id: string;
  first_name: string | null;
  last_name: string | null;
  gender: string | null;
  date_of_birth: string | null;
  email: string | null;
  nationality: string | null;
  country: string | null;
  document: unknown;
  phone: unknown;
  billing_address: unknown;
  shipping_address: unknown;
  metadata: unknown;
  merchant_customer_created_at: string | null;
  created_at: string;
  updated_at: string;
}

export type NewCustomerRow = Omit<CustomerRow, 'created_at' | 'updated_at'>;

const COLUMNS = `id, organization_id, merchant_customer_id, first_name, last_name, gender, date_of_birth::text AS date_of_birth,
  email, nationality, country, document, phone, billing_address, shipping_address, metadata,
  merchant_customer_created_at, created_at, updated_at`;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export const customersRepository = {
  /** Inserts unless the organization already has the merchant_customer_id; undefined then. */
  async insert(db: Queryable, c: NewCustomerRow): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(
      `INSERT INTO customers (id, organization_id, merchant_customer_id, first_name, last_name, gender, date_of_birth, email,
         nationality, country, document, phone, billing_address, shipping_address, metadata, merchant_customer_created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (organization_id, merchant_customer_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        c.id, c.organization_id, c.merchant_customer_id, c.first_name, c.last_name, c.gender, c.date_of_birth, c.email,
        c.nationality, c.country, json(c.document), json(c.phone), json(c.billing_address), json(c.shipping_address),
        json(c.metadata ?? []), c.merchant_customer_created_at,
      ],
    );
    return rows[0];
  },

  async findIdByMerchantCustomerId(db: Queryable, organizationId: string, merchantCustomerId: string): Promise<string | undefined> {
    const rows = await db.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1 AND merchant_customer_id = $2', [
      organizationId,
      merchantCustomerId,
    ]);
    return rows[0]?.id;
  },

  /** The organization's customer, or undefined (another organization's customer is "not found" too). */
  async find(db: Queryable, organizationId: string, id: string): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
    return rows[0];
  },
};
