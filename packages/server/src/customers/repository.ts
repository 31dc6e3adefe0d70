import type { Queryable } from '../db/database.js';
import { PERSONAL_DATA, type PersonalData } from '../platform/personal-data.js';

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

// The column lists follow the row type: a field added to CustomerRow (the mapper asks for it once the
// spec has it) does not compile until it is selected here and, for NewCustomerRow, inserted.
/** Each column as selected (date_of_birth as text: a `date` must not shift with the time zone). */
const SELECTED: Record<keyof CustomerRow, string> = {
  id: 'id', organization_id: 'organization_id', merchant_customer_id: 'merchant_customer_id', first_name: 'first_name',
  last_name: 'last_name', gender: 'gender', date_of_birth: 'date_of_birth::text', email: 'email', nationality: 'nationality',
  country: 'country', document: 'document', phone: 'phone', billing_address: 'billing_address', shipping_address: 'shipping_address',
  metadata: 'metadata', merchant_customer_created_at: 'merchant_customer_created_at', created_at: 'created_at', updated_at: 'updated_at',
};
const COLUMNS = Object.entries(SELECTED)
  .map(([name, expr]) => (expr === name ? name : `${expr} AS ${name}`))
  .join(', ');

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const plain = (v: unknown) => v;
/** How each inserted field is sent: jsonb columns as JSON text. */
const INSERTED: Record<keyof NewCustomerRow, (v: unknown) => unknown> = {
  id: plain, organization_id: plain, merchant_customer_id: plain, first_name: plain, last_name: plain, gender: plain,
  date_of_birth: plain, email: plain, nationality: plain, country: plain, document: json, phone: json, billing_address: json,
  shipping_address: json, metadata: (v) => json(v ?? []), merchant_customer_created_at: plain,
};
/** The fields updateCustomer may change (every inserted one but the keys), each sent as on insert. */
export type CustomerChanges = Partial<Omit<NewCustomerRow, 'id' | 'organization_id'>>;
const UPDATABLE = new Set<string>(Object.keys(INSERTED).filter((f) => f !== 'id' && f !== 'organization_id'));

/**
 * The statement that deletes a customer: marks it deleted and clears every field the spec declares
 * personal on `Customer` (`x-personal-data: true`; a column has the field's name). The rest stays:
 * merchant_customer_id (payments and logs refer to it), the id and the timestamps. A personal field that is
 * neither nullable nor a list cannot be cleared: the server refuses to start rather than keep it.
 */
export function deletionSql(personal: PersonalData): string {
  const sets = personal.fieldsOf('Customer').map((f) => {
    if (f.cleared === undefined) throw new Error(`Customer.${f.name} is personal but neither nullable nor a list: a deletion could not clear it`);
    return `${f.name} = ${f.cleared === 'null' ? 'NULL' : `'[]'`}`;
  });
  return `UPDATE customers SET deleted_at = clock_timestamp(), updated_at = clock_timestamp(), ${sets.join(', ')}
    WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL
    RETURNING id`;
}
const DELETION_SQL = deletionSql(PERSONAL_DATA);

const INSERT_FIELDS = Object.keys(INSERTED) as (keyof NewCustomerRow)[];
const INSERT_SQL = `INSERT INTO customers (${INSERT_FIELDS.join(', ')})
  VALUES (${INSERT_FIELDS.map((_, i) => `$${i + 1}`).join(', ')})
  ON CONFLICT (organization_id, merchant_customer_id) WHERE deleted_at IS NULL DO NOTHING
  RETURNING ${COLUMNS}`;

export const customersRepository = {
  /** Inserts unless the organization already has the merchant_customer_id; undefined then. */
  async insert(db: Queryable, c: NewCustomerRow): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(INSERT_SQL, INSERT_FIELDS.map((f) => INSERTED[f](c[f])));
    return rows[0];
  },

  async findIdByMerchantCustomerId(db: Queryable, organizationId: string, merchantCustomerId: string): Promise<string | undefined> {
    const rows = await db.query<{ id: string }>('SELECT id FROM customers WHERE organization_id = $1 AND merchant_customer_id = $2 AND deleted_at IS NULL', [
      organizationId,
      merchantCustomerId,
    ]);
    return rows[0]?.id;
  },

  /** The organization's customer, or undefined (another organization's customer, or a deleted one, is "not found" too). */
  async find(db: Queryable, organizationId: string, id: string): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL`, [
      id,
      organizationId,
    ]);
    return rows[0];
  },

  /**
   * As find, locking the row for share until the transaction ends: what the transaction writes for the
   * customer (a payment naming it) commits only while it lives; a deletion either committed before
   * (undefined here) or waits for this transaction and then finds what it wrote (vault/shred.ts).
   */
  async findForShare(db: Queryable, organizationId: string, id: string): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL FOR SHARE`, [
      id,
      organizationId,
    ]);
    return rows[0];
  },

  /** As find, locking the row until the transaction ends (an update compares and writes one state). */
  async findForUpdate(db: Queryable, organizationId: string, id: string): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(
      `SELECT ${COLUMNS} FROM customers WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [id, organizationId],
    );
    return rows[0];
  },

  async findByMerchantCustomerId(db: Queryable, organizationId: string, merchantCustomerId: string): Promise<CustomerRow | undefined> {
    const rows = await db.query<CustomerRow>(
      `SELECT ${COLUMNS} FROM customers WHERE organization_id = $1 AND merchant_customer_id = $2 AND deleted_at IS NULL`,
      [organizationId, merchantCustomerId],
    );
    return rows[0];
  },

  /**
   * Writes the given fields and moves updated_at. Throws the database's unique violation when another live
   * customer of the organization has the new merchant_customer_id (the caller maps it, inside a savepoint).
   */
  async update(db: Queryable, organizationId: string, id: string, changes: CustomerChanges): Promise<CustomerRow | undefined> {
    const fields = (Object.keys(changes) as (keyof CustomerChanges)[]).filter((f) => UPDATABLE.has(f) && changes[f] !== undefined);
    const sets = fields.map((f, i) => `${f} = $${i + 3}`);
    const rows = await db.query<CustomerRow>(
      `UPDATE customers SET ${[...sets, 'updated_at = clock_timestamp()'].join(', ')}
        WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL
        RETURNING ${COLUMNS}`,
      [id, organizationId, ...fields.map((f) => INSERTED[f](changes[f]))],
    );
    return rows[0];
  },

  /**
   * A page of the organization's live customers, newest first; `afterId` is the last id of the previous
   * page: ties in created_at are broken by id, so paging neither skips nor repeats a customer.
   */
  async list(
    db: Queryable,
    organizationId: string,
    filter: { createdGte: string | null; createdLt: string | null },
    limit: number,
    afterId: string | null,
  ): Promise<CustomerRow[]> {
    return db.query<CustomerRow>(
      `SELECT ${COLUMNS} FROM customers
        WHERE organization_id = $1 AND deleted_at IS NULL
          AND ($2::timestamptz IS NULL OR created_at >= $2::timestamptz) AND ($3::timestamptz IS NULL OR created_at < $3::timestamptz)
          AND ($4::text IS NULL OR (created_at, id) < (SELECT c.created_at, c.id FROM customers c WHERE c.id = $4 AND c.organization_id = $1))
        ORDER BY created_at DESC, id DESC LIMIT $5`,
      [organizationId, filter.createdGte, filter.createdLt, afterId, limit],
    );
  },

  /** Whether the id is a customer of the organization, deleted ones included (a list cursor may be one). */
  async existsInOrganization(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    return (await db.query('SELECT 1 FROM customers WHERE id = $1 AND organization_id = $2', [id, organizationId])).length > 0;
  },

  /**
   * Whether the customer is live, locking its row for share until the transaction ends: a write that belongs
   * to the customer (a vaulted payment method) commits only while it lives, and a deletion either committed
   * before (false here) or waits for that write and then sees it.
   */
  async lockLive(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM customers WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL FOR SHARE', [id, organizationId]);
    return rows.length > 0;
  },

  /** Marks the customer deleted and clears its personal data; false when there was no live customer. */
  async markDeleted(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    const rows = await db.query(DELETION_SQL, [id, organizationId]);
    return rows.length > 0;
  },
};
