/**
 * The vault's long-lived service: the keyring, checked against the keys this database has seen, and the
 * operations that use key material (seal/open a PAN, fingerprint a card). Nothing else touches keys.
 */
import type { Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import { pruneDeadRows } from './prune.js';
import { keyCheckValue, open, VaultDecryptionError, type Sealed } from '../keyring/cipher.js';
import { createDataKeyWrapper, newDataKey, openWithDataKey, RECORD_KEY_ID, sealWithDataKey } from './crypto/data-keys.js';
import { cardFingerprint } from './crypto/fingerprint.js';
import { VaultKeyError, type Keyring, type ResolvedKeyring, type VaultKey } from '../keyring/keyring.js';
import { createPurposeBox } from '../keyring/secret-box.js';
import { paymentMethodKeysRepository as keysRepo, paymentMethodsRepository as repo, vaultKeysRepository } from './repository.js';

export interface SealedColumns {
  ciphertext: Uint8Array;
  iv: Uint8Array;
  tag: Uint8Array;
  keyId: string;
}

/** What a new method stores: its secrets sealed under a fresh data key, and that key wrapped by the keyring. */
export interface SealedMethod {
  pan?: Sealed;
  details?: Sealed;
  /** The method's payment_method_keys row. */
  dataKey: Sealed;
}

export interface VaultService {
  readonly activeKeyId: string;
  /**
   * Seals a new method's PAN and/or details under a data key of its own (bound to the organization, the
   * method id and its token). Store the result's columns and its `dataKey` row in one transaction.
   */
  sealMethod(organizationId: string, paymentMethodId: string, vaultedToken: string, secrets: { pan?: string; details?: unknown }): SealedMethod;
  /**
   * Opens a sealed PAN: with the method's wrapped data key when it is sealed under one (`dataKey` null:
   * destroyed, VaultDecryptionError), with the keyring for a row not yet moved to a data key.
   */
  openPan(organizationId: string, paymentMethodId: string, vaultedToken: string, sealed: SealedColumns, dataKey: SealedColumns | null): string;
  openDetails(organizationId: string, paymentMethodId: string, vaultedToken: string, sealed: SealedColumns, dataKey: SealedColumns | null): unknown;
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
  const wrapper = createDataKeyWrapper(keyring);
  /** Opens with the record's data key, or (a row sealed before per-record keys) with the keyring itself. */
  const openSealed = (org: string, methodId: string, sealed: SealedColumns, dataKey: SealedColumns | null, aad: string): string => {
    if (sealed.keyId !== RECORD_KEY_ID) return open(keyring, sealed, aad);
    if (!dataKey) throw new VaultDecryptionError('the data key of this vaulted record was destroyed');
    return openWithDataKey(wrapper.unwrap(org, methodId, dataKey), sealed, aad);
  };
  return {
    activeKeyId: keyring.active.id,
    sealMethod: (org, methodId, token, secrets) => {
      const key = newDataKey();
      return {
        ...(secrets.pan !== undefined ? { pan: sealWithDataKey(key, secrets.pan, panContext(org, token)) } : {}),
        ...(secrets.details !== undefined ? { details: sealWithDataKey(key, JSON.stringify(secrets.details), detailsContext(org, token)) } : {}),
        dataKey: wrapper.wrap(org, methodId, key),
      };
    },
    openPan: (org, methodId, token, sealed, dataKey) => openSealed(org, methodId, sealed, dataKey, panContext(org, token)),
    openDetails: (org, methodId, token, sealed, dataKey) => JSON.parse(openSealed(org, methodId, sealed, dataKey, detailsContext(org, token))) as unknown,
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
          `vault key ${id} still seals stored data (payment methods, webhook, provider or connection secrets) but is missing from VAULT_ENCRYPTION_KEY; add it back (after the active key) and start once, which re-seals everything under the active key`,
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
 * At start, in batches of `batch` rows (one transaction each, rows locked, SKIP LOCKED so instances
 * starting together share the work): (1) methods still sealed under a keyring key (written before
 * per-record data keys, migration 0018) get a data key of their own and are re-sealed under it;
 * (2) data keys wrapped under an older keyring key (after a rotation) are re-wrapped under the active
 * one. Idempotent: a second run finds nothing. Returns how many methods and keys changed.
 */
export async function rewrapPaymentMethods(db: Queryable, keyring: Keyring, vault: VaultService, batch = 500): Promise<{ moved: number; rewrapped: number }> {
  const all = keyring.keys.map((k) => k.id);
  let moved = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const rows = await repo.sealedUnder(tx, all, batch);
      for (const r of rows) {
        const pan = r.pan_key_id ? vault.openPan(r.organization_id, r.id, r.vaulted_token, sealedOf(r.pan_ciphertext, r.pan_iv, r.pan_tag, r.pan_key_id), null) : undefined;
        const details = r.details_key_id
          ? vault.openDetails(r.organization_id, r.id, r.vaulted_token, sealedOf(r.details_ciphertext, r.details_iv, r.details_tag, r.details_key_id), null)
          : undefined;
        const sealed = vault.sealMethod(r.organization_id, r.id, r.vaulted_token, { ...(pan !== undefined ? { pan } : {}), ...(details !== undefined ? { details } : {}) });
        await keysRepo.replace(tx, r.id, r.organization_id, sealed.dataKey);
        await repo.reseal(tx, r.id, sealed.pan, sealed.details);
      }
      return rows.length;
    });
    moved += done;
    if (done < batch) break;
  }
  const older = all.filter((id) => id !== keyring.active.id);
  let rewrapped = 0;
  if (older.length > 0) {
    const wrapper = createDataKeyWrapper(keyring);
    for (;;) {
      const done = await db.transaction(async (tx) => {
        const rows = await keysRepo.wrappedUnder(tx, older, batch);
        for (const r of rows) {
          const key = wrapper.unwrap(r.organization_id, r.payment_method_id, sealedOf(r.ciphertext, r.iv, r.tag, r.key_id));
          await keysRepo.replace(tx, r.payment_method_id, r.organization_id, wrapper.wrap(r.organization_id, r.payment_method_id, key));
        }
        return rows.length;
      });
      rewrapped += done;
      if (done < batch) break;
    }
  }
  return { moved, rewrapped };
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
  const { moved, rewrapped } = await rewrapPaymentMethods(deps.db, keyring, vault);
  if (moved > 0) {
    deps.log.info({ moved, keyId: keyring.active.id }, 'vaulted payment methods moved to per-record data keys');
    // Their keyring-sealed versions are now dead rows the keyring still opens: prune them now, not at autovacuum.
    await pruneDeadRows(deps.db, ['payment_methods'], deps.log);
  }
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: keyring.active.id }, 'payment method data keys re-wrapped under the active key');
  deps.log.info(
    { activeKeyId: keyring.active.id, keyIds: keyring.keys.map((k) => k.id), source: keyring.source, ...(file ? { file, created } : {}) },
    'card vault keys ready',
  );
  return { vault };
}
