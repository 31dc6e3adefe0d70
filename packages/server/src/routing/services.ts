import type { Database, Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ServiceDeps } from '../services.js';
import type { SandboxDefaults } from '../tenancy/service.js';
import type { Keyring } from '../keyring/keyring.js';
import { createConnectionBox, type ConnectionBox } from './connection-secrets.js';
import { forgetConnection } from './connections.js';
import { routingRepository as repo } from './repository.js';
import { addDefaultRouting, addOrganizationDefaults } from './service.js';

declare module '../context.js' {
  interface AppServices {
    /** Seals and opens provider connection credentials (routing/connection-secrets.ts). */
    connectionBox: ConnectionBox;
    /** What tenancy gives a new organization or account in sandbox mode: the sandbox connections and routings. */
    sandboxDefaults: SandboxDefaults;
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

/** A repaired organization: its connections disabled at start, and the routings whose steps named them. */
export interface DisabledConnections {
  organizationId: string;
  connections: { id: string; providerId: string }[];
  routings: string[];
}

/**
 * Connections to providers this service does not run are disabled at start (a database that got the
 * sandbox connections — seeded in sandbox mode, or given them by the bug of issue 21 — started outside
 * sandbox mode): their routing steps are skipped from then on, and PATCH cannot enable them again. One
 * warn line per organization says which connections and routings. Under the defaults' advisory lock, so
 * instances starting together repair once.
 */
export async function disableUnavailableConnections(db: Database, providers: ProviderRegistry, log: Logger): Promise<DisabledConnections[]> {
  const repaired = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [DEFAULTS_LOCK]);
    const disabled = await repo.disableConnectionsOutside(tx, providers.ids());
    if (disabled.length === 0) return [];
    const byOrganization = new Map<string, DisabledConnections>();
    for (const c of disabled) {
      const entry = byOrganization.get(c.organization_id) ?? { organizationId: c.organization_id, connections: [], routings: [] };
      entry.connections.push({ id: c.id, providerId: c.provider_id });
      byOrganization.set(c.organization_id, entry);
    }
    for (const r of await repo.routingsOf(tx, [...byOrganization.keys()])) {
      const entry = byOrganization.get(r.organization_id)!;
      const ids = new Set(entry.connections.map((c) => c.id));
      const steps = [r.default_route, ...r.condition_sets.map((s) => s.route)].flatMap((route) => route.steps);
      if (steps.some((s) => ids.has(s.connection_id))) entry.routings.push(r.id);
    }
    return [...byOrganization.values()];
  });
  for (const r of repaired) {
    for (const c of r.connections) forgetConnection(r.organizationId, c.id);
    log.warn(
      { event: 'connections_disabled', organizationId: r.organizationId, connections: r.connections, routings: r.routings, runs: providers.ids() },
      `connections to providers this service does not run disabled (the sandbox providers exist in sandbox mode only): ${r.connections.map((c) => `${c.providerId} ${c.id}`).join(', ')}; their steps in ${r.routings.length} routing(s) are skipped`,
    );
  }
  return repaired;
}

export async function buildRoutingServices(deps: Pick<ServiceDeps, 'db' | 'log' | 'config'>, vaultKeyring: Keyring, providers: ProviderRegistry) {
  const connectionBox = createConnectionBox(vaultKeyring);
  const rewrapped = await rewrapConnections(deps.db, connectionBox);
  if (rewrapped > 0) deps.log.info({ rewrapped, keyId: connectionBox.activeKeyId }, 'provider connection credentials re-sealed under the active key');
  await disableUnavailableConnections(deps.db, providers, deps.log);
  // The sandbox connections and routing exist in sandbox mode only (an older organization gets them there).
  if (deps.config.sandbox) {
    const upgraded = await addMissingOrganizationDefaults(deps.db, connectionBox);
    if (upgraded > 0) deps.log.info({ organizations: upgraded }, 'organizations from before routing given the sandbox connections and CARD routing');
  }
  const sandboxDefaults: SandboxDefaults = {
    addToOrganization: (tx, organizationId) => addOrganizationDefaults(tx, connectionBox, organizationId),
    addToAccount: addDefaultRouting,
  };
  return { connectionBox, sandboxDefaults };
}
