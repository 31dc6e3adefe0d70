/**
 * The event log (GET /v1/events, issue 15): every webhook event of the organization stays retrievable
 * for EVENT_RETENTION_DAYS, whether or not an endpoint received it. Older events are not answered even
 * before the retention job removes them, so the documented lifetime holds on every instance.
 */
import type { Schemas } from '@payorch/types';
import { toIsoMicros, type Queryable } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import { upgradeEventData } from './event-upgrades.js';
import { ENVELOPE_VERSION, resourceKind, type EventType } from './event-types.js';
import { webhooksRepository as repo, type EventLogRow } from './repository.js';
import { pageOf } from '../http/paging.js';

export const EVENT_RETENTION_DAYS = 30;

const oldestKept = (now: Date) => new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000).toISOString();

/** The event as delivered, less the per-delivery `retry`; its data as stored (the row's type decides its shape). */
function toApiEvent(row: EventLogRow): Schemas['Event'] {
  const type = row.type as EventType;
  return {
    id: row.id,
    type: resourceKind(type),
    type_event: type,
    account_id: row.account_id,
    version: ENVELOPE_VERSION,
    created_at: toIsoMicros(row.created_at),
    data: upgradeEventData(row.data),
  } as Schemas['Event'];
}

export type ListEventsResult = { kind: 'ok'; value: Schemas['EventList'] } | { kind: 'invalid'; errors: FieldError[] };

export async function listEvents(
  db: Queryable,
  organizationId: string,
  query: { type?: string; createdGte?: string; createdLt?: string; limit: number; startingAfter?: string },
  now = new Date(),
): Promise<ListEventsResult> {
  const since = oldestKept(now);
  if (query.startingAfter !== undefined && !(await repo.findEvent(db, organizationId, query.startingAfter, since))) {
    return { kind: 'invalid', errors: [{ path: '/query/starting_after', message: 'is not a cursor of this list' }] };
  }
  const rows = await repo.listEvents(
    db,
    organizationId,
    { since, type: query.type ?? null, createdGte: query.createdGte ?? null, createdLt: query.createdLt ?? null },
    query.limit + 1,
    query.startingAfter ?? null,
  );
  const { items, ...paging } = pageOf(rows, query.limit, (e) => e.id);
  return { kind: 'ok', value: { events: items.map(toApiEvent), ...paging } };
}

export async function getEvent(db: Queryable, organizationId: string, id: string, now = new Date()): Promise<Schemas['Event'] | undefined> {
  const row = await repo.findEvent(db, organizationId, id, oldestKept(now));
  return row ? toApiEvent(row) : undefined;
}
