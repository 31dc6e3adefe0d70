/**
 * Provider notifications per connection (POST /v1/provider-notifications/{connection_id}) as the sandbox
 * acquirers send them: a body of sandbox-notifications.ts's shapes, signed per Standard Webhooks with the
 * sandbox's secret, posted without merchant credentials.
 */
import { randomUUID } from 'node:crypto';
import type { TestServer } from './harness.js';
import { signedNotification } from './payments.js';

export type SandboxNotificationType = 'CHARGEBACK' | 'FOLLOW_UP_SETTLED' | 'DISPUTE_CLOSED' | (string & {});

export interface Signed {
  raw: string;
  headers: Record<string, string>;
}

/** A signed sandbox notification; `id` keeps a delivery's id (re-deliveries), `at` and `secret` make bad ones. */
export async function sandboxNotification(
  t: TestServer,
  type: SandboxNotificationType,
  data: Record<string, unknown>,
  options: { id?: string; at?: Date; secret?: string } = {},
): Promise<Signed> {
  const id = options.id ?? `ntf_${randomUUID()}`;
  const body = { id, type, created_at: (options.at ?? new Date()).toISOString(), data };
  return signedNotification(t, body, { ...(options.at ? { at: options.at } : {}), ...(options.secret ? { secret: options.secret } : {}) });
}

export function postConnectionNotification(t: TestServer, connectionId: string, signed: Signed): Promise<Response> {
  return t.fetch(`/provider-notifications/${connectionId}`, { method: 'POST', headers: signed.headers, body: signed.raw, credentials_: false });
}

/** The connection a transaction went through, as the database records it. */
export async function connectionOf(t: TestServer, transactionId: string): Promise<string> {
  const rows = await t.db.query<{ connection_id: string | null }>('SELECT connection_id FROM payment_transactions WHERE id = $1', [transactionId]);
  const id = rows[0]?.connection_id;
  if (!id) throw new Error(`transaction ${transactionId} names no connection`);
  return id;
}
