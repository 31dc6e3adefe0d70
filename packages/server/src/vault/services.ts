/**
 * The vault's long-lived service: the keyring, checked against the keys this database has seen, and the
 * operations that use key material (seal/open a PAN, fingerprint a card). Nothing else touches keys.
 */
import type { Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import { keyCheckValue, open, seal, type Sealed } from './crypto/cipher.js';
import { cardFingerprint } from './crypto/fingerprint.js';
import { resolveKeyring, VaultKeyError, type Keyring, type VaultKey } from './crypto/keyring.js';
import { vaultKeysRepository } from './repository.js';

export interface SealedColumns {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
  keyId: string;
}

export interface VaultService {
  readonly activeKeyId: string;
  /** Encrypts a PAN for one vaulted record (bound to it: it opens only for the same organization and token). */
  sealPan(organizationId: string, vaultedToken: string, pan: string): Sealed;
  openPan(organizationId: string, vaultedToken: string, sealed: SealedColumns): string;
  /** Encrypts the full details of a non-card method (a bank account number…). */
  sealDetails(organizationId: string, vaultedToken: string, details: unknown): Sealed;
  openDetails(organizationId: string, vaultedToken: string, sealed: SealedColumns): unknown;
  /** Keyed HMAC of the PAN: equal within an organization, unrelated across organizations. */
  fingerprint(organizationId: string, pan: string): string;
}

declare module '../context.js' {
  interface AppServices {
    /** The card vault's keys (vault/services.ts). */
    vault: VaultService;
  }
}

const panContext = (organizationId: string, vaultedToken: string) => `payorch:pan:v1:${organizationId}:${vaultedToken}`;
const detailsContext = (organizationId: string, vaultedToken: string) => `payorch:details:v1:${organizationId}:${vaultedToken}`;

export function createVaultService(keyring: Keyring, fingerprintRoot: VaultKey): VaultService {
  return {
    activeKeyId: keyring.active.id,
    sealPan: (org, token, pan) => seal(keyring.active, pan, panContext(org, token)),
    openPan: (org, token, sealed) => open(keyring, sealed, panContext(org, token)),
    sealDetails: (org, token, details) => seal(keyring.active, JSON.stringify(details), detailsContext(org, token)),
    openDetails: (org, token, sealed) => JSON.parse(open(keyring, sealed, detailsContext(org, token))) as unknown,
    fingerprint: (org, pan) => cardFingerprint(fingerprintRoot, org, pan),
  };
}

/**
 * Registers the keyring's keys in this database and checks it can serve the stored data: a known id
 * with other key material, or a retired key that stored rows still need, stops the start. Returns the
 * fingerprint root (the first key this database ever registered), so fingerprints survive rotation.
 */
export async function registerKeys(db: Queryable, keyring: Keyring): Promise<VaultKey> {
  return db.transaction(async (tx) => {
    await vaultKeysRepository.lock(tx);
    const known = new Map((await vaultKeysRepository.list(tx)).map((k) => [k.id, k.check_value]));
    for (const key of keyring.keys) {
      const stored = known.get(key.id);
      if (stored !== undefined && stored !== keyCheckValue(key)) {
        throw new VaultKeyError(
          `vault key ${key.id} is not the key this database's cards were encrypted with (check value mismatch); restore the original VAULT_ENCRYPTION_KEY (or the sandbox vault-key.json)`,
        );
      }
    }
    for (const id of known.keys()) {
      if (!keyring.byId.has(id) && (await vaultKeysRepository.isInUse(tx, id))) {
        throw new VaultKeyError(`vault key ${id} still encrypts stored payment methods but is missing from VAULT_ENCRYPTION_KEY; add it back (after the active key)`);
      }
    }
    // Oldest first, so that on a fresh database the oldest key of the ring becomes the fingerprint root.
    for (const key of [...keyring.keys].reverse()) {
      if (!known.has(key.id)) await vaultKeysRepository.insert(tx, key.id, keyCheckValue(key));
    }
    const rootId = (await vaultKeysRepository.list(tx))[0]!.id;
    const root = keyring.byId.get(rootId);
    if (!root) {
      throw new VaultKeyError(
        `vault key ${rootId} is the root of card fingerprints in this database but is missing from VAULT_ENCRYPTION_KEY; keep it in the keyring`,
      );
    }
    return root;
  });
}

export async function buildVaultServices(deps: ServiceDeps): Promise<{ vault: VaultService }> {
  const { keyring, file, created } = await resolveKeyring(deps.config);
  const root = await registerKeys(deps.db, keyring);
  deps.log.info(
    { activeKeyId: keyring.active.id, keyIds: keyring.keys.map((k) => k.id), source: keyring.source, ...(file ? { file, created } : {}) },
    'card vault keys ready',
  );
  return { vault: createVaultService(keyring, root) };
}
