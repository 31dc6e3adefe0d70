/** Storage rows → API shapes (every field present; secrets never, except where the spec shows them once). */
import type { Schemas } from '@payorch/types';
import { toIsoMicros } from '../db/database.js';
import type { AttemptRow, DeliveryRow, EndpointRow } from './repository.js';

export function toApiEndpoint(row: EndpointRow): Schemas['WebhookEndpoint'] {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as Schemas['WebhookEndpoint']['events'],
    enabled: row.enabled,
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
  };
}

export function toApiAttempt(row: AttemptRow): Schemas['WebhookDeliveryAttempt'] {
  return {
    attempt: row.attempt,
    trigger: row.trigger,
    started_at: toIsoMicros(row.started_at),
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    error: row.error,
    succeeded: row.succeeded,
  };
}

export function toApiDelivery(row: DeliveryRow, attempts: readonly AttemptRow[]): Schemas['WebhookDelivery'] {
  return {
    id: row.id,
    webhook_endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type as Schemas['WebhookEventType'],
    resource_id: row.resource_id,
    status: row.status,
    attempt_count: row.attempts,
    next_attempt_at: row.status === 'PENDING' ? toIsoMicros(row.next_attempt_at) : null,
    delivered_at: toIsoMicros(row.delivered_at),
    created_at: toIsoMicros(row.created_at),
    attempts: attempts.map(toApiAttempt),
  };
}
