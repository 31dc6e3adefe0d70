/**
 * An organization's connections to providers: the defaults every organization starts with, the ones a
 * merchant creates and deletes, the list and changes the API offers, and opening one for a provider call
 * (credentials unsealed, cached briefly).
 */
import type { Schemas } from '@payorch/types';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
import { SANDBOX_A, SANDBOX_B, type ProviderRegistry } from '../providers/registry.js';
import type { FieldError } from '../http/problems.js';
import type { ProviderCatalogue } from '../providers/catalogue.js';
import type { ConnectionBox } from './connection-secrets.js';
import { credentialProblems, type Environment } from './credential-rules.js';
import type { StoredRoute } from './model.js';
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
  input: { providerId: string; name: string; credentials: Record<string, string>; timeoutMs?: number; environment?: Environment },
): Promise<NewConnection & { row: ConnectionRow }> {
  const id = randomUUID();
  const row = await repo.insertConnection(db, {
    id,
    organizationId,
    providerId: input.providerId,
    name: input.name,
    environment: input.environment ?? 'TEST',
    sealed: box.seal(id, input.credentials),
    timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return { id, providerId: input.providerId, name: input.name, row };
}

/**
 * Live connections per organization (deleted ones do not count): the spec's ConnectionList has maxItems
 * 100, and GET /v1/connections lists them all, so one more is refused (409 CONNECTION_LIMIT_REACHED).
 */
export const MAX_CONNECTIONS_PER_ORGANIZATION = 100;

/** POST /v1/connections's body (spec: ConnectionCreateRequest, one shape of credentials per provider). */
export type ConnectionCreateInput = Schemas['ConnectionCreateRequest'];

export type CreateConnectionResult =
  | { kind: 'created'; connection: ConnectionView }
  /** A provider this service does not run (a sandbox one outside sandbox mode, a connector not built in). */
  | { kind: 'provider_not_available'; providerId: string }
  /** Credentials the schema cannot refuse: of the other environment, a field out of place for it. */
  | { kind: 'invalid'; errors: FieldError[] }
  /** The organization has MAX_CONNECTIONS_PER_ORGANIZATION live connections already: nothing stored. */
  | { kind: 'limit_reached'; max: number };

/**
 * Creates a connection a merchant asked for: a provider this service runs, credentials of the
 * connection's environment (credential-rules.ts), sealed, while the organization has fewer than
 * MAX_CONNECTIONS_PER_ORGANIZATION live connections. The sandbox providers' credentials may be left
 * out: they are generated (any value of their form is accepted by the sandbox acquirers).
 */
export async function createConnection(
  db: Queryable,
  box: ConnectionBox,
  organizationId: string,
  input: ConnectionCreateInput,
  catalogue: Pick<ProviderCatalogue, 'get'>,
): Promise<CreateConnectionResult> {
  if (!catalogue.get(input.provider_id)) return { kind: 'provider_not_available', providerId: input.provider_id };
  const credentials: Record<string, string> = input.credentials ? { ...input.credentials } : sandboxCredentials(input.provider_id);
  const errors = credentialProblems(input.provider_id, input.environment, credentials);
  if (errors.length > 0) return { kind: 'invalid', errors };
  // Counted and inserted under the organization's routes lock (as deletes are): two concurrent creates
  // at 99 cannot both pass the count.
  return db.transaction(async (tx): Promise<CreateConnectionResult> => {
    await repo.lockRoutes(tx, organizationId);
    if ((await repo.countConnections(tx, organizationId)) >= MAX_CONNECTIONS_PER_ORGANIZATION) return { kind: 'limit_reached', max: MAX_CONNECTIONS_PER_ORGANIZATION };
    const { row } = await addConnection(tx, box, organizationId, {
      providerId: input.provider_id,
      name: input.name,
      environment: input.environment,
      credentials,
      ...(input.timeout_ms !== undefined ? { timeoutMs: input.timeout_ms } : {}),
    });
    return { kind: 'created', connection: viewOf(row) };
  });
}

export type DeleteConnectionResult = { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'in_use'; routings: string[] };

const stepsOf = (r: { default_route: StoredRoute; condition_sets: { route: StoredRoute }[] }) => [r.default_route, ...r.condition_sets.map((s) => s.route)].flatMap((route) => route.steps);

/**
 * Deletes a connection no routing step names (otherwise in_use, naming the routings). Soft: the row and
 * its sealed credentials stay for the follow-ups and reconciliation of payments made through it
 * (openConnection still opens it, as disabled), while no list, route or new payment sees it again.
 * Under the organization's routes lock (repository lockRoutes), as routing writes are.
 */
export async function deleteConnection(db: Queryable, organizationId: string, connectionId: string): Promise<DeleteConnectionResult> {
  const result = await db.transaction(async (tx): Promise<DeleteConnectionResult> => {
    await repo.lockRoutes(tx, organizationId);
    if (!(await repo.findConnection(tx, organizationId, connectionId))) return { kind: 'not_found' };
    const routings = (await repo.routingsOf(tx, [organizationId])).filter((r) => stepsOf(r).some((s) => s.connection_id === connectionId)).map((r) => r.id);
    if (routings.length > 0) return { kind: 'in_use', routings };
    return (await repo.markConnectionDeleted(tx, organizationId, connectionId)) ? { kind: 'deleted' } : { kind: 'not_found' };
  });
  forgetConnection(organizationId, connectionId);
  return result;
}

/** The API's connection (spec: Connection): never its credentials. */
export type ConnectionView = Schemas['Connection'];

export const viewOf = (row: ConnectionRow): ConnectionView => ({
  connection_id: row.id,
  provider_id: row.provider_id,
  name: row.name,
  environment: row.environment,
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
 * no such connection. A disabled or deleted connection is returned too (`enabled: false`): callers
 * decide (routing skips it; the follow-ups and reconciliation of its payments still go through it).
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
    enabled: row.enabled && row.deleted_at === null,
    context: { connectionId: row.id, credentials, timeoutMs: row.timeout_ms, environment: row.environment },
  };
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, { at: Date.now(), connection });
  return connection;
}
