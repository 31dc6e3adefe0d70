/**
 * Recording events: the outbox half of webhooks. `recordEvent` is called by the domain that changes
 * state, inside the same transaction as the change, so an event exists if and only if the change
 * committed; the delivery worker (worker.ts) sends it afterwards, however often it takes.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
import { upgradeEventData } from './event-upgrades.js';
import { ENVELOPE_VERSION, resourceKind, type EventData, type EventEnvelope, type EventType } from './event-types.js';
import { webhooksRepository as repo } from './repository.js';

export interface NewEvent<T extends EventType = EventType> {
  organizationId: string;
  /** The account of the resource (the envelope's `account_id`), or null. */
  accountId: string | null;
  type: T;
  /** The spec's data shape for T: `{payment}`, `{payment, transaction}` or `{customer_id, payment_method}`. */
  data: EventData<T>;
  /** The payment id or vaulted token: events of one resource reach each endpoint in the order recorded. */
  resourceId: string;
}

/**
 * Writes the event and one delivery per enabled endpoint of the organization subscribed to its type,
 * with `tx` (the caller's transaction). Returns the event id (the `webhook-id` receivers see).
 */
export async function recordEvent<T extends EventType>(tx: Queryable, event: NewEvent<T>): Promise<{ eventId: string; deliveries: number }> {
  if (event.resourceId.length === 0 || event.resourceId.length > 64) throw new Error('recordEvent: resourceId must be 1–64 characters');
  const id = randomUUID();
  const deliveries = await repo.insertEventWithDeliveries(tx, {
    id,
    organization_id: event.organizationId,
    account_id: event.accountId,
    type: event.type,
    resource_id: event.resourceId,
    data: event.data,
  });
  return { eventId: id, deliveries };
}

/** The JSON body of one delivery attempt (Yuno-style envelope; `retry` counts earlier attempts). */
export function envelopeJson(e: { id: string; type: string; accountId: string | null; data: unknown; createdAt: string }, retry: number): string {
  const type = e.type as EventType;
  const envelope = {
    id: e.id,
    type: resourceKind(type),
    type_event: type,
    account_id: e.accountId,
    retry,
    version: ENVELOPE_VERSION,
    created_at: toIsoMicros(e.createdAt),
    data: upgradeEventData(e.data),
  } as EventEnvelope;
  return JSON.stringify(envelope);
}
