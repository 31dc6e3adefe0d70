/**
 * Webhook endpoints and their delivery log: the rules (URL policy, event subscriptions, secret rotation
 * with an overlap window, redelivery). Repository for SQL, mapper for API shapes.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { toIsoMicros, type Queryable } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import { toApiDelivery, toApiEndpoint } from './mapper.js';
import { webhooksRepository as repo, type DeliveryRow } from './repository.js';
import { generateSecret, type SecretBox } from './secrets.js';
import { endpointUrlProblem } from './url-policy.js';
import { pageOf } from '../http/paging.js';

export interface WebhookRules {
  secrets: SecretBox;
  /** Sandbox mode: plain http to loopback hosts is allowed. */
  sandbox: boolean;
  clock: () => Date;
}

type Subscription = Schemas['WebhookEventSubscription'];

export type Result<T> = { kind: 'ok'; value: T } | { kind: 'invalid'; errors: FieldError[] } | { kind: 'not-found' } | { kind: 'conflict'; detail: string };

/**
 * Webhook endpoints per organization (Stripe allows 16 per account): each one is a delivery per event,
 * so the cap bounds what one event costs the shared worker.
 */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 16;

/** The default overlap during which a rotated-out secret still signs. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;
const ATTEMPTS_SHOWN = 100;

/** `*` subsumes every type; otherwise the given types, deduplicated, in catalogue order of arrival. */
function normalizeEvents(events: readonly Subscription[]): Subscription[] {
  return events.includes('*') ? ['*'] : [...new Set(events)];
}

export async function addSecret(db: Queryable, rules: WebhookRules, endpointId: string): Promise<string> {
  const secret = generateSecret();
  const id = randomUUID();
  const sealed = rules.secrets.seal(endpointId, id, secret);
  await repo.insertSecret(db, { id, endpoint_id: endpointId, key_id: sealed.keyId, ciphertext: sealed.ciphertext, iv: sealed.iv, tag: sealed.tag });
  return secret;
}

export async function createEndpoint(
  db: Queryable,
  rules: WebhookRules,
  organizationId: string,
  input: Schemas['WebhookEndpointCreateRequest'],
): Promise<Result<Schemas['WebhookEndpointCreated']>> {
  const urlProblem = endpointUrlProblem(input.url, rules.sandbox);
  if (urlProblem) return { kind: 'invalid', errors: [{ path: '/body/url', message: urlProblem }] };
  return db.transaction(async (tx) => {
    // Counted under a per-organization lock: concurrent registrations never pass the cap together.
    if ((await repo.lockAndCountEndpoints(tx, organizationId)) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
      return {
        kind: 'conflict' as const,
        detail: `An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints (disabled ones included); delete one first.`,
      };
    }
    const row = await repo.insertEndpoint(tx, {
      id: randomUUID(),
      organization_id: organizationId,
      url: input.url,
      description: input.description ?? null,
      events: normalizeEvents(input.events),
      enabled: input.enabled ?? true,
    });
    const secret = await addSecret(tx, rules, row.id);
    return { kind: 'ok' as const, value: { ...toApiEndpoint(row), secret } };
  });
}

export async function listEndpoints(
  db: Queryable,
  organizationId: string,
  limit: number,
  startingAfter: string | undefined,
): Promise<Result<Schemas['WebhookEndpointList']>> {
  if (startingAfter !== undefined && !(await repo.endpointExistsInOrganization(db, organizationId, startingAfter))) {
    return { kind: 'invalid', errors: [{ path: '/query/starting_after', message: 'is not a cursor of this list' }] };
  }
  const rows = await repo.listEndpoints(db, organizationId, limit + 1, startingAfter ?? null);
  const { items, ...paging } = pageOf(rows, limit, (e) => e.id);
  return { kind: 'ok', value: { webhook_endpoints: items.map(toApiEndpoint), ...paging } };
}

export async function getEndpoint(db: Queryable, organizationId: string, id: string): Promise<Result<Schemas['WebhookEndpoint']>> {
  const row = await repo.findEndpoint(db, organizationId, id);
  return row ? { kind: 'ok', value: toApiEndpoint(row) } : { kind: 'not-found' };
}

export async function updateEndpoint(
  db: Queryable,
  rules: WebhookRules,
  organizationId: string,
  id: string,
  patch: Schemas['WebhookEndpointUpdateRequest'],
): Promise<Result<Schemas['WebhookEndpoint']>> {
  if (patch.url !== undefined) {
    const urlProblem = endpointUrlProblem(patch.url, rules.sandbox);
    if (urlProblem) return { kind: 'invalid', errors: [{ path: '/body/url', message: urlProblem }] };
  }
  const row = await repo.updateEndpoint(db, organizationId, id, {
    ...(patch.url !== undefined ? { url: patch.url } : {}),
    ...(patch.events !== undefined ? { events: normalizeEvents(patch.events) } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
  });
  return row ? { kind: 'ok', value: toApiEndpoint(row) } : { kind: 'not-found' };
}

export async function deleteEndpoint(db: Queryable, organizationId: string, id: string): Promise<Result<null>> {
  const deleted = await db.transaction((tx) => repo.deleteEndpoint(tx, organizationId, id));
  return deleted ? { kind: 'ok', value: null } : { kind: 'not-found' };
}

/** A new current secret; the previous one keeps signing for `overlapSeconds` (both signatures are sent). */
export async function rotateSecret(
  db: Queryable,
  rules: WebhookRules,
  organizationId: string,
  id: string,
  overlapSeconds: number,
): Promise<Result<Schemas['WebhookSecretRotated']>> {
  return db.transaction(async (tx) => {
    // The lock serializes concurrent rotations of one endpoint (one current secret at a time).
    if (!(await repo.findEndpoint(tx, organizationId, id, true))) return { kind: 'not-found' as const };
    const now = rules.clock();
    const expiresAt = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
    const effective = await repo.retireCurrentSecret(tx, id, expiresAt, now.toISOString());
    const secret = await addSecret(tx, rules, id);
    return {
      kind: 'ok' as const,
      value: { webhook_endpoint_id: id, secret, previous_secret_expires_at: toIsoMicros(effective) },
    };
  });
}

async function withAttempts(db: Queryable, rows: readonly DeliveryRow[]): Promise<Schemas['WebhookDelivery'][]> {
  const attempts = await repo.attemptsOf(db, rows.map((r) => r.id), ATTEMPTS_SHOWN);
  return rows.map((r) => toApiDelivery(r, attempts.filter((a) => a.delivery_id === r.id)));
}

export async function listDeliveries(
  db: Queryable,
  organizationId: string,
  endpointId: string,
  query: { eventId?: string; status?: Schemas['WebhookDeliveryStatus']; limit: number; startingAfter?: string },
): Promise<Result<Schemas['WebhookDeliveryList']>> {
  if (!(await repo.findEndpoint(db, organizationId, endpointId))) return { kind: 'not-found' };
  if (query.startingAfter !== undefined && !(await repo.deliveryExists(db, endpointId, query.startingAfter))) {
    return { kind: 'invalid', errors: [{ path: '/query/starting_after', message: 'is not a cursor of this list' }] };
  }
  const rows = await repo.listDeliveries(db, endpointId, { eventId: query.eventId ?? null, status: query.status ?? null }, query.limit + 1, query.startingAfter ?? null);
  const { items, ...paging } = pageOf(rows, query.limit, (d) => d.id);
  return { kind: 'ok', value: { deliveries: await withAttempts(db, items), ...paging } };
}

export async function getDelivery(db: Queryable, organizationId: string, endpointId: string, deliveryId: string): Promise<Result<Schemas['WebhookDelivery']> | { kind: 'no-endpoint' }> {
  if (!(await repo.findEndpoint(db, organizationId, endpointId))) return { kind: 'no-endpoint' };
  const row = await repo.findDelivery(db, endpointId, deliveryId);
  if (!row) return { kind: 'not-found' };
  return { kind: 'ok', value: (await withAttempts(db, [row]))[0]! };
}

/** Queues the delivery for an immediate attempt (the same event id, so receivers deduplicate) with a fresh retry schedule. */
export async function redeliver(
  db: Queryable,
  rules: WebhookRules,
  organizationId: string,
  endpointId: string,
  deliveryId: string,
): Promise<Result<Schemas['WebhookDelivery']> | { kind: 'no-endpoint' }> {
  return db.transaction(async (tx) => {
    const endpoint = await repo.findEndpoint(tx, organizationId, endpointId);
    if (!endpoint) return { kind: 'no-endpoint' as const };
    const row = await repo.findDelivery(tx, endpointId, deliveryId, true);
    if (!row) return { kind: 'not-found' as const };
    if (!endpoint.enabled) return { kind: 'conflict' as const, detail: 'The webhook endpoint is disabled; enable it before redelivering.' };
    const queued = await repo.requeue(tx, row.id, rules.clock().toISOString());
    return { kind: 'ok' as const, value: (await withAttempts(tx, [queued]))[0]! };
  });
}
