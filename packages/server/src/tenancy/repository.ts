import type { Queryable } from '../db/database.js';

export interface OrganizationRow {
  id: string;
  name: string;
  pci_certified: boolean;
}

export interface ApiKeyRow {
  public_key: string;
  organization_id: string;
  secret_sha256: Uint8Array;
  pci_certified: boolean;
}

export const tenancyRepository = {
  async insertOrganization(db: Queryable, org: { id: string; name: string; pciCertified: boolean }): Promise<void> {
    await db.query('INSERT INTO organizations (id, name, pci_certified) VALUES ($1, $2, $3)', [org.id, org.name, org.pciCertified]);
  },

  async findOrganization(db: Queryable, id: string): Promise<OrganizationRow | undefined> {
    const rows = await db.query<OrganizationRow>('SELECT id, name, pci_certified FROM organizations WHERE id = $1', [id]);
    return rows[0];
  },

  async countOrganizations(db: Queryable): Promise<number> {
    const rows = await db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM organizations');
    return rows[0]?.n ?? 0;
  },

  async insertAccount(db: Queryable, account: { id: string; organizationId: string; name: string }): Promise<void> {
    await db.query('INSERT INTO accounts (id, organization_id, name) VALUES ($1, $2, $3)', [account.id, account.organizationId, account.name]);
  },

  async accountBelongsTo(db: Queryable, accountId: string, organizationId: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM accounts WHERE id = $1 AND organization_id = $2', [accountId, organizationId]);
    return rows.length > 0;
  },

  async insertApiKey(db: Queryable, key: { publicKey: string; organizationId: string; secretSha256: Buffer }): Promise<string> {
    const rows = await db.query<{ created_at: string }>(
      'INSERT INTO api_keys (public_key, organization_id, secret_sha256) VALUES ($1, $2, $3) RETURNING created_at',
      [key.publicKey, key.organizationId, key.secretSha256],
    );
    return rows[0]!.created_at;
  },

  /** The active key with its organization's PCI flag, or undefined. */
  async findActiveApiKey(db: Queryable, publicKey: string): Promise<ApiKeyRow | undefined> {
    const rows = await db.query<ApiKeyRow>(
      `SELECT k.public_key, k.organization_id, k.secret_sha256, o.pci_certified
         FROM api_keys k JOIN organizations o ON o.id = k.organization_id
        WHERE k.public_key = $1 AND k.revoked_at IS NULL`,
      [publicKey],
    );
    return rows[0];
  },

  /** The organization's newest active public key (what a page payorch hosts for it tokenizes with), or undefined. */
  async newestActivePublicKey(db: Queryable, organizationId: string): Promise<string | undefined> {
    const rows = await db.query<{ public_key: string }>(
      'SELECT public_key FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1',
      [organizationId],
    );
    return rows[0]?.public_key;
  },

  async revokeApiKey(db: Queryable, organizationId: string, publicKey: string): Promise<boolean> {
    const rows = await db.query(
      'UPDATE api_keys SET revoked_at = clock_timestamp() WHERE organization_id = $1 AND public_key = $2 AND revoked_at IS NULL RETURNING public_key',
      [organizationId, publicKey],
    );
    return rows.length > 0;
  },
};
