/**
 * An organization's connections to providers: the defaults every organization starts with, the list and
 * changes the API offers, and opening one for a provider call (credentials unsealed, cached briefly).
 */
import type { Schemas } from '@payorch/types';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
import { SANDBOX_A, SANDBOX_B, type ProviderRegistry } from '../providers/registry.js';
import type { ConnectionBox } from './connection-secrets.js';
import type { UsableConnection } from './plan.js';
import { routingRepository as repo, type ConnectionRow } from './repository.js';

/** A new connection's timeout: a card authorization answers in 1–3 s; 10 s leaves room without holding a payment long. */
export const DEFAULT_TIMEOUT_MS = 10_000;
export const TIMEOUT_BOUNDS = { min: 100, max: 60_000 } as const;

/**
 * Sandbox credentials by the convention the sandbox acquirers check (any value of this form is accepted):
 * SANDBOX_A an API key `sk_sandbox_` + letters, digits or `_`; SANDBOX_B a merchant account `merchant_…` (3–64
 * letters, digits, `_`) and a password of 8+ characters (the acquirers' servers in providers/sandbox/).
 */
export function sandboxCredentials(providerId: string): Record<string, string> {
  const random = () => randomBytes(18).toString('hex');
  if (providerId === SANDBOX_A) return { api_key: `sk_sandbox_${random()}` };
  if (providerId === SANDBOX_B) return { merchant_account: `merchant_${random()}`, password: random() };
  throw new Error(`no sandbox credentials for provider ${providerId}`);
}

export interface NewConnection {
  id: string;
  providerId: string;
  name: string;
}

/** Adds a connection with its credentials sealed; the clear credentials never reach the database. */
export async function addConnection(
  db: Queryable,
  box: ConnectionBox,
  organizationId: string,
  input: { providerId: string; name: string; credentials: Record<string, string>; timeoutMs?: number },
): Promise<NewConnection> {
  const id = randomUUID();
  await repo.insertConnection(db, {
    id,
    organizationId,
    providerId: input.providerId,
    name: input.name,
    sealed: box.seal(id, input.credentials),
    timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return { id, providerId: input.providerId, name: input.name };
}

/** The API's connection (spec: Connection): never its credentials. */
export type ConnectionView = Schemas['Connection'];

export const viewOf = (row: ConnectionRow): ConnectionView => ({
  connection_id: row.id,
  provider_id: row.provider_id,
  name: row.name,
  enabled: row.enabled,
  timeout_ms: row.timeout_ms,
  created_at: toIsoMicros(row.created_at),
  updated_at: toIsoMicros(row.updated_at),
});

export async function listConnections(db: Queryable, organizationId: string): Promise<ConnectionView[]> {
  return (await repo.listConnections(db, organizationId)).map(viewOf);
}

export type UpdateConnectionResult =
  | { kind: 'updated'; connection: ConnectionView }
  | { kind: 'not_found' }
  /** Enabling a connection to a provider this service does not run (a sandbox one outside sandbox mode): nothing changed. */
  | { kind: 'provider_not_available'; providerId: string };

export async function updateConnection(
  db: Queryable,
  organizationId: string,
  connectionId: string,
  patch: { name?: string; enabled?: boolean; timeout_ms?: number },
  providers: Pick<ProviderRegistry, 'get'>,
): Promise<UpdateConnectionResult> {
  if (patch.enabled === true) {
    const current = await repo.findConnection(db, organizationId, connectionId);
    if (!current) return { kind: 'not_found' };
    if (!providers.get(current.provider_id)) return { kind: 'provider_not_available', providerId: current.provider_id };
  }
  const row = await repo.updateConnection(db, organizationId, connectionId, {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    ...(patch.timeout_ms !== undefined ? { timeoutMs: patch.timeout_ms } : {}),
  });
  forgetConnection(organizationId, connectionId);
  return row ? { kind: 'updated', connection: viewOf(row) } : { kind: 'not_found' };
}

// Opened connections, per process, for a few seconds: a payment reads its route's connections every time,
// and unsealing is an HKDF-keyed AES-GCM open. A PATCH here forgets its entry at once; another process
// sees the change within the TTL.
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
const cache = new Map<string, { at: number; connection: UsableConnection }>();
const cacheKey = (organizationId: string, connectionId: string) => `${organizationId}\u0000${connectionId}`;

export function forgetConnection(organizationId: string, connectionId: string): void {
  cache.delete(cacheKey(organizationId, connectionId));
  byId.delete(connectionId);
}

// The same for provider notifications, which name only the connection (POST
// /v1/provider-notifications/{connection_id}): looked up by id alone, its organization with it.
const byId = new Map<string, { at: number; organizationId: string; connection: UsableConnection }>();

/**
 * The connection named by a provider notification and its organization, credentials opened; undefined
 * when no connection has this id. Cached like openConnection, so a flood of notifications for one
 * connection costs one lookup every few seconds.
 */
export async function openConnectionById(
  db: Queryable,
  box: ConnectionBox,
  connectionId: string,
): Promise<{ organizationId: string; connection: UsableConnection } | undefined> {
  const hit = byId.get(connectionId);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit;
  const row = await repo.findSealedConnectionById(db, connectionId);
  if (!row) {
    byId.delete(connectionId);
    return undefined;
  }
  const credentials = box.open(row.id, { ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, keyId: row.key_id });
  const entry = {
    at: Date.now(),
    organizationId: row.organization_id,
    connection: { connectionId: row.id, providerId: row.provider_id, name: row.name, enabled: row.enabled, context: { connectionId: row.id, credentials, timeoutMs: row.timeout_ms } },
  };
  if (byId.size >= CACHE_MAX) byId.delete(byId.keys().next().value!);
  byId.set(connectionId, entry);
  return entry;
}

/**
 * The connection ready for a provider call (credentials opened), or undefined when the organization has
 * no such connection. A disabled connection is returned too (`enabled: false`): callers decide.
 */
export async function openConnection(db: Queryable, box: ConnectionBox, organizationId: string, connectionId: string): Promise<UsableConnection | undefined> {
  const key = cacheKey(organizationId, connectionId);
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.connection;
  const row = await repo.findSealedConnection(db, organizationId, connectionId);
  if (!row) {
    cache.delete(key);
    return undefined;
  }
  const credentials = box.open(row.id, { ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, keyId: row.key_id });
  const connection: UsableConnection = {
    connectionId: row.id,
    providerId: row.provider_id,
    name: row.name,
    enabled: row.enabled,
    context: { connectionId: row.id, credentials, timeoutMs: row.timeout_ms },
  };
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, { at: Date.now(), connection });
  return connection;
}
