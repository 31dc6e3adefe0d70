import type { Database, Queryable } from '../db/database.js';
import type { ServiceDeps } from '../services.js';
import type { Keyring } from '../vault/crypto/keyring.js';
import { createConnectionBox, type ConnectionBox } from './connection-secrets.js';
import { routingRepository as repo } from './repository.js';
import { addOrganizationDefaults } from './service.js';

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

const DEFAULTS_LOCK = 727_016;

/**
 * Organizations created before connections existed (a database migrated past 0016) get what a new one
 * starts with: without it every payment of theirs would answer 422 NO_ROUTE after the upgrade. An
 * organization with any connection is left alone (its routing is the merchant's). Under an advisory lock,
 * so instances starting together add one set.
 */
export async function addMissingOrganizationDefaults(db: Database, box: ConnectionBox): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [DEFAULTS_LOCK]);
    const organizations = await repo.organizationsWithoutConnections(tx);
    for (const id of organizations) await addOrganizationDefaults(tx, box, id);
    return organizations.length;
  });
}

export async function buildRoutingServices(deps: Pick<ServiceDeps, 'db' | 'log'>, vaultKeyring: Keyring) {
  const connectionBox = createConnectionBox(vaultKeyring);
  const rewrapped = await rewrapConnections(deps.db, connectionBox);
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: connectionBox.activeKeyId }, 'provider connection credentials re-sealed under the active key');
  const upgraded = await addMissingOrganizationDefaults(deps.db, connectionBox);
  if (upgraded > 0) deps.log.info({ organizations: upgraded }, 'organizations from before routing given the sandbox connections and CARD routing');
  return { connectionBox };
}
