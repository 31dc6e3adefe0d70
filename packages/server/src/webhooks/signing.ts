/**
 * Standard Webhooks signing (outbound) and verification (inbound), on the `standardwebhooks` library.
 *
 * Outbound: `webhook-signature` carries one `v1,<base64>` per currently valid secret of the endpoint,
 * space-separated, so during a rotation's overlap receivers holding either secret accept the delivery.
 *
 * Inbound (reusable by the provider-notification endpoint): `verifySignedRequest` checks the signature
 * against one or more secrets over the exact raw body, with a timestamp tolerance both ways and an
 * injectable clock; replay rejection by id is the caller's unique insert of `id` (see the report / README).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export type SignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** The three headers for a payload signed with every given secret (newest first). */
export function signatureHeaders(id: string, at: Date, payload: string, secrets: readonly string[]): SignatureHeaders {
  if (secrets.length === 0) throw new Error('no signing secret');
  const seconds = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, new Date(seconds * 1000), payload)).join(' '),
  };
}

/**
 * The headers of Yuno's webhook configuration (`/webhooks`), sent in addition to the Standard Webhooks ones
 * when the endpoint has them: `x-api-key`, `x-secret`, and `x-hmac-signature`, the base64 HMAC-SHA256 of
 * the raw body under `hmac_client_secret`.
 */
export function yunoHeaders(payload: string, credentials: readonly (readonly ['api_key' | 'secret' | 'hmac_client_secret', string])[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [kind, value] of credentials) {
    if (kind === 'api_key') headers['x-api-key'] = value;
    else if (kind === 'secret') headers['x-secret'] = value;
    else headers['x-hmac-signature'] = createHmac('sha256', value).update(payload, 'utf8').digest('base64');
  }
  return headers;
}

export type VerificationFailure = 'missing-headers' | 'bad-timestamp' | 'stale' | 'future' | 'bad-signature';

export type Verification = { ok: true; id: string; timestamp: Date } | { ok: false; reason: VerificationFailure; message: string };

export interface VerifyOptions {
  /** Accepted clock difference in seconds, both ways (default 300, as Standard Webhooks recommends). */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v.join(' ') : v;
}

/**
 * Checks a Standard Webhooks request: headers present, timestamp within tolerance, and a `v1` signature
 * matching one of `secrets` (constant-time). Pass the raw body bytes as received. Never throws for a
 * bad request; the caller answers 401 on `ok: false` and then claims `id` once (replay protection).
 */
export function verifySignedRequest(
  rawBody: string | Buffer,
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[],
  options: VerifyOptions = {},
): Verification {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sig = header(headers, 'webhook-signature');
  if (!id || !ts || !sig) return { ok: false, reason: 'missing-headers', message: 'webhook-id, webhook-timestamp and webhook-signature are required' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'bad-timestamp', message: 'webhook-timestamp is not Unix seconds' };
  const sent = Number(ts);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (now - sent > tolerance) return { ok: false, reason: 'stale', message: 'webhook-timestamp is too old' };
  if (sent - now > tolerance) return { ok: false, reason: 'future', message: 'webhook-timestamp is too far in the future' };
  const payload = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const given = sig
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, value]) => version === 'v1' && value)
    .map(([, value]) => Buffer.from(value!, 'base64'));
  for (const secret of secrets) {
    const expected = Buffer.from(new Webhook(secret).sign(id, new Date(sent * 1000), payload).slice(3), 'base64');
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return { ok: true, id, timestamp: new Date(sent * 1000) };
  }
  return { ok: false, reason: 'bad-signature', message: 'no webhook-signature matches' };
}
