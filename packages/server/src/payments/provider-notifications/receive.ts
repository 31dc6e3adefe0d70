/**
 * POST /v1/provider-notifications/{connection_id}: a provider's notification for one connection.
 * Nothing is read or written before the signature is verified, except the connection's lookup (cached,
 * routing/connections.ts): its credentials are what the provider's connector verifies the raw body
 * with. An unknown id, a provider that sends no notifications and a bad signature all answer alike (401),
 * so the answer never tells which connection ids exist. Then each event is applied on its own (apply.ts),
 * within the connection's organization's share of the database (db/organization-gate.ts).
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../platform/logger.js';
import { inRequestScope } from '../../platform/request-scope.js';
import type { ParsedNotification } from '../../providers/connector.js';
import { NotificationSignatureError } from '../../providers/provider.js';
import type { ProviderRegistry } from '../../providers/registry.js';
import type { ConnectionBox } from '../../routing/connection-secrets.js';
import { openConnectionById } from '../../routing/connections.js';
import { applyConnectorEvent, type EventResult } from './apply.js';

export type ReceiveOutcome =
  | { kind: 'unauthorized'; why: 'unknown connection' | 'no notifications' | 'bad signature' }
  | { kind: 'acknowledged'; acknowledgement: ParsedNotification['acknowledgement']; results: EventResult[] };

/** Connection ids are UUIDs: anything else names no connection, and costs no lookup. */
const CONNECTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ReceiveDeps {
  db: Database;
  providers: ProviderRegistry;
  connectionBox: ConnectionBox;
  log: Logger;
}

export async function receiveConnectionNotification(
  deps: ReceiveDeps,
  connectionId: string,
  rawBody: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  query: Readonly<Record<string, string | undefined>> = {},
): Promise<ReceiveOutcome> {
  if (!CONNECTION_ID.test(connectionId)) return { kind: 'unauthorized', why: 'unknown connection' };
  const opened = await openConnectionById(deps.db, deps.connectionBox, connectionId.toLowerCase());
  if (!opened) return { kind: 'unauthorized', why: 'unknown connection' };
  const provider = deps.providers.get(opened.connection.providerId);
  if (!provider?.parseConnectionNotification) return { kind: 'unauthorized', why: 'no notifications' };

  let parsed: ParsedNotification;
  try {
    if (rawBody === undefined) throw new NotificationSignatureError('no body');
    parsed = await provider.parseConnectionNotification(rawBody, headers, opened.connection.context, query);
  } catch (err) {
    if (err instanceof NotificationSignatureError) return { kind: 'unauthorized', why: 'bad signature' };
    throw err;
  }

  const via = { connectionId: opened.connection.connectionId, organizationId: opened.organizationId, provider };
  const results = await inRequestScope(opened.organizationId, async () => {
    const done: EventResult[] = [];
    // One after another: a batch (Adyen) may hold a capture and then its refund.
    for (const event of parsed.events) done.push(await applyConnectorEvent(deps.db, via, event));
    return done;
  });
  for (const r of results) {
    const about = { connectionId: via.connectionId, notificationId: r.notificationId, kind: r.kind, detail: r.detail };
    if (r.state === 'IGNORED') deps.log.info(about, 'provider notification ignored');
    // Kept until its subject is recorded (applied then): a subject that never comes leaves it parked, so say so.
    if (r.state === 'PARKED') deps.log.warn(about, 'provider notification parked: nothing it is about is recorded yet');
    if (r.alert) deps.log.error({ ...about, paymentId: r.alert.paymentId, transactionId: r.alert.transactionId }, r.alert.message);
  }
  return { kind: 'acknowledged', acknowledgement: parsed.acknowledgement, results };
}
