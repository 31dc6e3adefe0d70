/**
 * Standard Webhooks (https://www.standardwebhooks.com) signatures with WebCrypto, so verification runs
 * in Node ≥ 20, browsers, Deno, Bun and edge runtimes alike: HMAC-SHA256 over
 * `${webhook-id}.${webhook-timestamp}.${raw body}` keyed with the base64 secret after `whsec_`, sent as
 * `webhook-signature: v1,<base64> [v1,<base64> …]`, compared in constant time, with a 5-minute tolerance.
 */
import type { WebhookEvent } from '@payorch/types';

/** The payload, id, timestamp or signature is wrong: reject the request (answer 400/401). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A Fetch `Headers` object or Node's `req.headers` (lower-case names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Accepted clock difference in seconds, both ways. Default 300. */
  toleranceSeconds?: number;
  /** The current time (for tests). */
  now?: Date | number;
}

const encoder = new TextEncoder();
const SECRET_PREFIX = 'whsec_';

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

function fromBase64(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function secretKey(secret: string): Uint8Array {
  const key = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!key || key.length === 0) throw new TypeError('payorch: the webhook secret must be base64, optionally prefixed with whsec_');
  return key;
}

function asBytes(payload: string | Uint8Array): Uint8Array {
  return typeof payload === 'string' ? encoder.encode(payload) : payload;
}

async function hmac(secret: string, id: string, timestamp: string, payload: Uint8Array): Promise<Uint8Array> {
  const key = await globalThis.crypto.subtle.importKey('raw', secretKey(secret) as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + payload.length);
  content.set(prefix);
  content.set(payload, prefix.length);
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, content));
}

/** Compares in time that depends only on the length (which is public: 32 bytes for SHA-256). */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Verifies a webhook's signature and returns its parsed JSON body, one of the spec's events: narrow it
 * with `switch (event.type_event)`. Throws `WebhookVerificationError` otherwise. Pass the raw body
 * exactly as received (a string or bytes), not a re-serialized object. The body is not validated against
 * the event schemas again: a valid signature says payorch sent it.
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');

  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid webhook-timestamp');
  const nowSeconds = Math.floor((options.now === undefined ? Date.now() : +options.now) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  const sent = Number(timestamp);
  if (nowSeconds - sent > tolerance) throw new WebhookVerificationError('webhook timestamp is too old');
  if (sent - nowSeconds > tolerance) throw new WebhookVerificationError('webhook timestamp is too new');

  const body = asBytes(payload);
  const expected = await hmac(secret, id, timestamp, body);
  const matched = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = fromBase64(signature);
    return given !== undefined && timingSafeEqual(given, expected);
  });
  if (!matched) throw new WebhookVerificationError('no matching webhook signature');

  const text = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  try {
    return JSON.parse(text) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('webhook payload is not JSON');
  }
}

/** Signs a payload the way `verifyWebhook` (and every Standard Webhooks library) checks it: the three headers to send. */
export async function signWebhook(
  payload: string | Uint8Array,
  secret: string,
  options: { id?: string; timestamp?: Date | number } = {},
): Promise<{ 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string }> {
  const id = options.id ?? `msg_${globalThis.crypto.randomUUID()}`;
  const timestamp = String(Math.floor((options.timestamp === undefined ? Date.now() : +options.timestamp) / 1000));
  const signature = toBase64(await hmac(secret, id, timestamp, asBytes(payload)));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
