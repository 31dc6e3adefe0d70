/**
 * One HTTP call to an acquirer, with the connection's timeout, and every way it can fail mapped to a
 * ProviderUnavailableError kind: nothing sent (connection refused, DNS) → NOT_SENT; no answer in time →
 * TIMEOUT; the socket broke before a full answer → CONNECTION_CUT; a 5xx or a body that is not JSON →
 * BAD_RESPONSE. Any other HTTP status is an answer, handed back to the adapter to interpret.
 * fetch is undici's, with its keep-alive pool.
 */
import { ProviderUnavailableError, type UnavailableKind } from '../provider.js';

export interface AcquirerAnswer {
  status: number;
  body: Record<string, unknown>;
}

export async function callAcquirer(
  providerId: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown },
  timeoutMs: number,
): Promise<AcquirerAnswer> {
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method,
      headers: init.body === undefined ? init.headers : { ...init.headers, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal,
    });
  } catch (err) {
    throw unavailable(providerId, err, false);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw unavailable(providerId, err, true);
  }
  if (res.status >= 500) throw new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered HTTP ${res.status}`);
  try {
    const body: unknown = text === '' ? {} : JSON.parse(text);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    return { status: res.status, body: body as Record<string, unknown> };
  } catch {
    throw new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered HTTP ${res.status} with a body that is not a JSON object`);
  }
}

/** Codes meaning the request never left: the provider certainly did not act. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);

function unavailable(providerId: string, err: unknown, afterHeaders: boolean): ProviderUnavailableError {
  const name = (err as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new ProviderUnavailableError(providerId, 'TIMEOUT', `${providerId} did not answer in time`);
  const code = errorCode(err);
  // Anything else is treated as "maybe processed": a lookup settles it, a wrong NOT_SENT could charge twice.
  const kind: UnavailableKind = !afterHeaders && code !== undefined && NOT_SENT_CODES.has(code) ? 'NOT_SENT' : 'CONNECTION_CUT';
  return new ProviderUnavailableError(providerId, kind, `${providerId} call failed: ${code ?? (err as Error)?.message ?? String(err)}`);
}

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
