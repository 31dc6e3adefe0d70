/**
 * The provider's notification signing secret at rest: sealed with the vault keyring (a purpose of its
 * own, bound to the provider id), never in clear. Loading it is also where it is kept current: a row
 * written in clear (before migration 0007) is sealed and its clear copy dropped, and a row sealed under
 * an older vault key is re-sealed under the active one, so the old key can leave the keyring afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/database.js';
import { VaultDecryptionError } from '../../keyring/cipher.js';
import type { Keyring } from '../../keyring/keyring.js';
import { createPurposeBox, type PurposeBox } from '../../keyring/secret-box.js';
import { sandboxRepository as repo } from './repository.js';

export class ProviderSecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderSecretKeyError';
  }
}

export function providerSecretBox(keyring: Keyring): PurposeBox {
  return createPurposeBox(keyring, { salt: 'payorch provider notification secrets v1', info: 'provider-notification-secret' });
}

const context = (providerId: string) => `payorch:provider-secret:v1:${providerId}`;

/** The provider's secret (`whsec_…`), generated and stored sealed on first use; the same for every instance. */
export async function loadNotificationSecret(db: Queryable, box: PurposeBox, providerId: string): Promise<string> {
  return db.transaction(async (tx) => {
    await repo.insertSecret(tx, providerId, box.seal(context(providerId), `whsec_${randomBytes(32).toString('base64')}`));
    const row = (await repo.lockSecret(tx, providerId))!;
    let secret: string;
    if (row.secret !== null) {
      secret = row.secret;
    } else {
      try {
        secret = box.open(context(providerId), { ciphertext: row.ciphertext!, iv: row.iv!, tag: row.tag!, keyId: row.key_id! });
      } catch (err) {
        if (!(err instanceof VaultDecryptionError)) throw err;
        throw new ProviderSecretKeyError(
          `the ${providerId} provider's notification secret is sealed under vault key ${row.key_id}, which is missing from VAULT_ENCRYPTION_KEY (or does not match); add it back after the active key`,
        );
      }
    }
    if (row.secret !== null || box.isStale(row.key_id!)) await repo.resealSecret(tx, providerId, box.seal(context(providerId), secret));
    return secret;
  });
}
