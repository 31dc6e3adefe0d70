/**
 * The vault's long-lived service: the keyring, checked against the keys this database has seen, and the
 * operations that use key material (seal/open a PAN, fingerprint a card). Nothing else touches keys.
 */
import type { Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import { keyCheckValue, open, seal, type Sealed } from './crypto/cipher.js';
import { cardFingerprint } from './crypto/fingerprint.js';
import { VaultKeyError, type Keyring, type ResolvedKeyring, type VaultKey } from './crypto/keyring.js';
import { createPurposeBox } from './crypto/secret-box.js';
import { paymentMethodsRepository as repo, vaultKeysRepository } from './repository.js';

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

// The fingerprint root is kept wrapped in its vault_keys row (sealed under the active key) so that fingerprints
// survive the root key leaving the keyring. A purpose of its own: never the key that seals cards.
const wrapBox = (keyring: Keyring) => createPurposeBox(keyring, { salt: 'payorch vault key wrapping v1', info: 'fingerprint-root' });
const wrapContext = (id: string) => `payorch:vault-key:v1:${id}`;

/**
 * Registers the keyring's keys in this database and checks it can serve the stored data: a known id
 * with other key material, or a retired key that stored rows still need, stops the start. Returns the
 * fingerprint root (the first key this database ever registered), so fingerprints survive rotation: from
 * the keyring while it holds that key, else from its wrapped copy (re-wrapped under the active key).
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
        throw new VaultKeyError(
          `vault key ${id} still seals stored data (payment methods, webhook or provider secrets) but is missing from VAULT_ENCRYPTION_KEY; add it back (after the active key) and start once, which re-seals everything under the active key`,
        );
      }
    }
    // Oldest first, so that on a fresh database the oldest key of the ring becomes the fingerprint root.
    for (const key of [...keyring.keys].reverse()) {
      if (!known.has(key.id)) await vaultKeysRepository.insert(tx, key.id, keyCheckValue(key));
    }
    const rootRow = (await vaultKeysRepository.list(tx))[0]!;
    const box = wrapBox(keyring);
    let root = keyring.byId.get(rootRow.id);
    if (!root && rootRow.wrapped_ciphertext && rootRow.wrapped_iv && rootRow.wrapped_tag && rootRow.wrapped_key_id && keyring.byId.has(rootRow.wrapped_key_id)) {
      const material = Buffer.from(
        box.open(wrapContext(rootRow.id), { ciphertext: rootRow.wrapped_ciphertext, iv: rootRow.wrapped_iv, tag: rootRow.wrapped_tag, keyId: rootRow.wrapped_key_id }),
        'base64',
      );
      root = { id: rootRow.id, material };
      if (keyCheckValue(root) !== rootRow.check_value) throw new VaultKeyError(`the wrapped copy of vault key ${rootRow.id} does not match its check value`);
    }
    if (!root) {
      throw new VaultKeyError(
        `vault key ${rootRow.id} is the root of card fingerprints in this database but is missing from VAULT_ENCRYPTION_KEY (and not wrapped under a key it holds); keep it in the keyring`,
      );
    }
    if (!rootRow.wrapped_key_id || box.isStale(rootRow.wrapped_key_id)) {
      await vaultKeysRepository.wrap(tx, rootRow.id, box.seal(wrapContext(rootRow.id), root.material.toString('base64')));
    }
    return root;
  });
}

/**
 * Re-seals every PAN and every method's details sealed under an older key with the active one (after
 * a rotation), in batches of `batch` rows, one transaction each. Returns how many methods changed.
 */
export async function rewrapPaymentMethods(db: Queryable, keyring: Keyring, vault: VaultService, batch = 500): Promise<number> {
  // Rows can only be sealed under keys of the ring (registerKeys refused the start otherwise).
  const older = keyring.keys.filter((k) => k.id !== keyring.active.id).map((k) => k.id);
  if (older.length === 0) return 0;
  let total = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const rows = await repo.sealedUnder(tx, older, batch);
      for (const r of rows) {
        const pan =
          r.pan_key_id && r.pan_key_id !== keyring.active.id
            ? vault.sealPan(r.organization_id, r.vaulted_token, vault.openPan(r.organization_id, r.vaulted_token, sealedOf(r.pan_ciphertext, r.pan_iv, r.pan_tag, r.pan_key_id)))
            : undefined;
        const details =
          r.details_key_id && r.details_key_id !== keyring.active.id
            ? vault.sealDetails(
                r.organization_id,
                r.vaulted_token,
                vault.openDetails(r.organization_id, r.vaulted_token, sealedOf(r.details_ciphertext, r.details_iv, r.details_tag, r.details_key_id)),
              )
            : undefined;
        await repo.reseal(tx, r.id, pan, details);
      }
      return rows.length;
    });
    total += done;
    if (done < batch) return total;
  }
}

const sealedOf = (ciphertext: Uint8Array | null, iv: Uint8Array | null, tag: Uint8Array | null, keyId: string): SealedColumns => ({
  ciphertext: ciphertext!,
  iv: iv!,
  tag: tag!,
  keyId,
});

export async function buildVaultServices(
  deps: ServiceDeps,
  { keyring, file, created }: ResolvedKeyring,
): Promise<{ vault: VaultService }> {
  const root = await registerKeys(deps.db, keyring);
  const vault = createVaultService(keyring, root);
  const rewrapped = await rewrapPaymentMethods(deps.db, keyring, vault);
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: keyring.active.id }, 'vaulted payment methods re-sealed under the active key');
  deps.log.info(
    { activeKeyId: keyring.active.id, keyIds: keyring.keys.map((k) => k.id), source: keyring.source, ...(file ? { file, created } : {}) },
    'card vault keys ready',
  );
  return { vault };
}
