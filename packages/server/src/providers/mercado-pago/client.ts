/**
 * The HTTP transport of the Mercado Pago connector.
 *
 * Why not the `mercadopago` package's own clients (Payment, CardToken, PaymentRefund): in v3 every one of
 * them calls its internal RestClient, which sends to the constant `AppConfig.BASE_URL`
 * (https://api.mercadopago.com) through the global `fetch`, reads the whole answer with `response.json()`
 * and retries 429/5xx by itself. It takes neither a host nor a fetch (its options are timeout, retries,
 * idempotency key and tracking headers), so it could neither reach a double nor keep our 64 KiB answer
 * limit without patching the package. So the package gives what it owns, the contract: the request and
 * answer types (transformers.ts is typed by them), its error classes (`buildError`, so a 4xx is the SDK's
 * typed error with Mercado Pago's `error` and `cause`), and its webhook signature validator
 * (notifications.ts); this file sends the same requests RestClient would (Bearer token, JSON,
 * `X-Idempotency-Key` on writes) through bounded-fetch.ts, once: no retries, the orchestrator decides.
 */
import { buildError, MercadoPagoError } from 'mercadopago';
import { boundedFetch } from '../http/bounded-fetch.js';
import { ProviderUnavailableError, type ConnectionContext } from '../provider.js';

export const MERCADO_PAGO = 'MERCADO_PAGO';
export const MERCADO_PAGO_PUBLIC_API = 'https://api.mercadopago.com';

export interface MercadoPagoRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** Path and query, e.g. /v1/payments/123. */
  path: string;
  /** JSON body, or a multipart form (evidence upload). */
  body?: unknown;
  form?: FormData;
  /** Sent as X-Idempotency-Key (writes only): our reference, so a retried write is answered, not repeated. */
  idempotencyKey?: string;
}

/**
 * One call with one connection's access token and timeout. Resolves with the parsed JSON of a 2xx answer;
 * a 4xx rejects with the SDK's typed MercadoPagoError (the adapter turns it into a result); a 5xx or an
 * unreadable body rejects with ProviderUnavailableError BAD_RESPONSE (the provider may have acted); a
 * transport failure with the kind bounded-request.ts gives it.
 */
export async function mercadoPagoCall<T>(baseUrl: string, connection: ConnectionContext, request: MercadoPagoRequest): Promise<T> {
  const token = connection.credentials.access_token;
  if (!token) throw new ProviderUnavailableError(MERCADO_PAGO, 'NOT_SENT', 'MERCADO_PAGO connection has no access_token');
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (request.form) {
    // Serialized here so the boundary in the content type travels with the bytes.
    const encoded = new Response(request.form);
    headers['content-type'] = encoded.headers.get('content-type')!;
    body = new Uint8Array(await encoded.arrayBuffer());
  } else if (request.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.body);
  }
  if (request.method !== 'GET' && request.idempotencyKey) headers['x-idempotency-key'] = request.idempotencyKey;
  const res = await boundedFetch(MERCADO_PAGO, connection.timeoutMs)(`${baseUrl}${request.path}`, { method: request.method, headers, ...(body !== undefined ? { body } : {}) });
  if (res.status >= 500) throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', `MERCADO_PAGO answered HTTP ${res.status}`);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', `MERCADO_PAGO answered HTTP ${res.status} with a body that is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', `MERCADO_PAGO answered HTTP ${res.status} with a body that is not an object`);
  }
  if (res.status >= 400) throw buildError(res.status, parsed as Record<string, unknown>);
  if (res.status < 200 || res.status >= 300) throw new ProviderUnavailableError(MERCADO_PAGO, 'BAD_RESPONSE', `MERCADO_PAGO answered HTTP ${res.status}`);
  return parsed as T;
}

/** The SDK's error for a 4xx answer (status, `error`, `message`, `cause`), else undefined. */
export function mercadoPagoError(err: unknown): MercadoPagoError | undefined {
  return err instanceof MercadoPagoError ? err : undefined;
}
