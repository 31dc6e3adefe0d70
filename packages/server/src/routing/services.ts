import type { Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import type { Keyring } from '../vault/crypto/keyring.js';
import { createConnectionBox, type ConnectionBox } from './connection-secrets.js';
import { routingRepository as repo } from './repository.js';

declare module '../context.js' {
  interface AppServices {
    /** Seals and opens provider connection credentials (routing/connection-secrets.ts). */
    connectionBox: ConnectionBox;
  }
}

/**
 * Re-seals connection credentials sealed under an older vault key with the active one (after a
 * rotation), so the old key can leave the keyring. Returns how many connections changed.
 */
export async function rewrapConnections(db: Queryable, box: ConnectionBox, batch = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const rows = await repo.sealedNotUnder(tx, box.activeKeyId, batch);
      for (const r of rows) {
        const credentials = box.open(r.id, { ciphertext: r.ciphertext, iv: r.iv, tag: r.tag, keyId: r.key_id });
        await repo.reseal(tx, r.id, box.seal(r.id, credentials));
      }
      return rows.length;
    });
    total += done;
    if (done < batch) return total;
  }
}

export async function buildRoutingServices(deps: Pick<ServiceDeps, 'db' | 'log'>, vaultKeyring: Keyring) {
  const connectionBox = createConnectionBox(vaultKeyring);
  const rewrapped = await rewrapConnections(deps.db, connectionBox);
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: connectionBox.activeKeyId }, 'provider connection credentials re-sealed under the active key');
  return { connectionBox };
}
