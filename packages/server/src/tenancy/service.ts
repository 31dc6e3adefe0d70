import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
import type { ConnectionBox } from '../routing/connection-secrets.js';
import { addDefaultRouting, addOrganizationDefaults } from '../routing/service.js';
import { generateKeyPair } from './credentials.js';
import { tenancyRepository as repo } from './repository.js';

export interface NewOrganization {
  organization_id: string;
  name: string;
  pci_certified: boolean;
  account_id: string;
  public_api_key: string;
  private_secret_key: string;
}

/**
 * What an organization starts with besides its account and keys: in sandbox mode (`sandboxDefaults`, the
 * box sealing the credentials) a connection to each sandbox acquirer and a CARD routing A then B
 * (docs/guides/routing.md); outside it nothing, since no sandbox provider exists there.
 */
export interface OrganizationDefaults {
  sandboxDefaults?: ConnectionBox;
}

/** Organization + first account + first key pair, atomically, with its defaults. The secret exists only in the return value. */
export async function createOrganization(db: Queryable, input: { name: string; pciCertified: boolean }, defaults: OrganizationDefaults): Promise<NewOrganization> {
  return db.transaction(async (tx) => {
    const organizationId = randomUUID();
    const accountId = randomUUID();
    const keys = generateKeyPair();
    await repo.insertOrganization(tx, { id: organizationId, name: input.name, pciCertified: input.pciCertified });
    await repo.insertAccount(tx, { id: accountId, organizationId, name: input.name });
    await repo.insertApiKey(tx, { publicKey: keys.publicKey, organizationId, secretSha256: keys.secretSha256 });
    if (defaults.sandboxDefaults) await addOrganizationDefaults(tx, defaults.sandboxDefaults, organizationId);
    return {
      organization_id: organizationId,
      name: input.name,
      pci_certified: input.pciCertified,
      account_id: accountId,
      public_api_key: keys.publicKey,
      private_secret_key: keys.secret,
    };
  });
}

/** `defaultRouting`: the sandbox's CARD routing, asked for and in sandbox mode (the caller decides both). */
export async function createAccount(db: Queryable, organizationId: string, name: string, defaultRouting: boolean) {
  if (!(await repo.findOrganization(db, organizationId))) return undefined;
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await repo.insertAccount(tx, { id, organizationId, name });
    // A new account gets the default CARD routing too, through the organization's sandbox connections.
    if (defaultRouting) await addDefaultRouting(tx, organizationId, id);
  });
  return { account_id: id, name };
}

export async function issueApiKey(db: Queryable, organizationId: string) {
  if (!(await repo.findOrganization(db, organizationId))) return undefined;
  const keys = generateKeyPair();
  const createdAt = await repo.insertApiKey(db, { publicKey: keys.publicKey, organizationId, secretSha256: keys.secretSha256 });
  return { public_api_key: keys.publicKey, private_secret_key: keys.secret, created_at: toIsoMicros(createdAt) };
}
