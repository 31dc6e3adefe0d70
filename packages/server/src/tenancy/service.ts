import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
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
 * What a new organization and a new account start with in sandbox mode, besides their own rows: a
 * connection to each sandbox acquirer and a CARD routing A then B (docs/guides/routing.md). Routing owns
 * connections and routings and reads tenancy's accounts, so tenancy declares what it calls and routing
 * implements it (routing/services.ts, AppServices.sandboxDefaults); tenancy imports nothing of routing.
 */
export interface SandboxDefaults {
  /** In the organization's transaction, once its first account exists. */
  addToOrganization(tx: Queryable, organizationId: string): Promise<void>;
  /** In the new account's transaction. */
  addToAccount(tx: Queryable, organizationId: string, accountId: string): Promise<void>;
}

/**
 * What an organization starts with besides its account and keys: in sandbox mode (`sandboxDefaults`) the
 * sandbox connections and routing; outside it nothing, since no sandbox provider exists there.
 */
export interface OrganizationDefaults {
  sandboxDefaults?: SandboxDefaults;
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
    if (defaults.sandboxDefaults) await defaults.sandboxDefaults.addToOrganization(tx, organizationId);
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

/** `defaultRouting`: given when the sandbox's CARD routing is asked for and in sandbox mode (the caller decides both). */
export async function createAccount(db: Queryable, organizationId: string, name: string, defaultRouting: SandboxDefaults | undefined) {
  if (!(await repo.findOrganization(db, organizationId))) return undefined;
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await repo.insertAccount(tx, { id, organizationId, name });
    // A new account gets the default CARD routing too, through the organization's sandbox connections.
    if (defaultRouting) await defaultRouting.addToAccount(tx, organizationId, id);
  });
  return { account_id: id, name };
}

export async function issueApiKey(db: Queryable, organizationId: string) {
  if (!(await repo.findOrganization(db, organizationId))) return undefined;
  const keys = generateKeyPair();
  const createdAt = await repo.insertApiKey(db, { publicKey: keys.publicKey, organizationId, secretSha256: keys.secretSha256 });
  return { public_api_key: keys.publicKey, private_secret_key: keys.secret, created_at: toIsoMicros(createdAt) };
}
