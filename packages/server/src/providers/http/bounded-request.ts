/**
 * The one HTTP path of every provider call (the connector kit's): the sandbox adapters use it through
 * json-call.ts, and a connector built on an official SDK plugs it in as that SDK's transport through
 * bounded-fetch.ts, so no provider answer is ever read any other way.
 *
 * The whole exchange (connect, send, headers, body) runs under ONE deadline, the connection's timeout: a
 * provider that drips its answer a byte at a time is cut at that deadline like one that never answers.
 * At most MAX_PROVIDER_ANSWER_BYTES of an answer are read: a longer one (declared or streamed) is cut
 * there and is BAD_RESPONSE, so neither the time nor the memory of a call grows with what a provider sends.
 *
 * Every failure maps to a ProviderUnavailableError kind: nothing sent (connection refused, DNS, TLS) →
 * NOT_SENT; deadline passed → TIMEOUT; the socket broke before a full answer → CONNECTION_CUT; an answer
 * over the limit → BAD_RESPONSE. Any complete answer, whatever its status, is handed back as bytes.
 */
import { ProviderUnavailableError, type UnavailableKind } from '../provider.js';

/** The most of a provider's answer ever read (64 KiB): far above any card operation's answer. */
export const MAX_PROVIDER_ANSWER_BYTES = 64 * 1024;

export interface ProviderHttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

export interface ProviderHttpOptions {
  /** The connection's timeout: the deadline of the whole exchange, headers and body. */
  timeoutMs: number;
  /** Defaults to MAX_PROVIDER_ANSWER_BYTES; a caller may only lower it. */
  maxBytes?: number;
  /** The caller's own cancellation (an SDK's abort), on top of the deadline. */
  signal?: AbortSignal;
}

export interface ProviderHttpAnswer {
  status: number;
  headers: Headers;
  /** The complete body, at most maxBytes long. */
  body: Uint8Array<ArrayBuffer>;
}

export async function providerRequest(providerId: string, request: ProviderHttpRequest, options: ProviderHttpOptions): Promise<ProviderHttpAnswer> {
  const maxBytes = Math.min(options.maxBytes ?? MAX_PROVIDER_ANSWER_BYTES, MAX_PROVIDER_ANSWER_BYTES);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let res: Response;
  try {
    res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal, redirect: 'manual' });
  } catch (err) {
    throw unavailable(providerId, err, false);
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLong(providerId, maxBytes);
  }
  return { status: res.status, headers: res.headers, body: await readBounded(providerId, res, maxBytes) };
}

/** Reads the body chunk by chunk (the fetch's signal still runs: the deadline covers it), stopping past maxBytes. */
async function readBounded(providerId: string, res: Response, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      // Cancelling the stream closes the socket: the rest is never transferred.
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLong(providerId, maxBytes);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw err;
    throw unavailable(providerId, err, true);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const tooLong = (providerId: string, maxBytes: number) =>
  new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered more than ${maxBytes} bytes; the answer was cut`);

/** Codes meaning the request never left: the provider certainly did not act. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);

function unavailable(providerId: string, err: unknown, afterHeaders: boolean): ProviderUnavailableError {
  const name = (err as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new ProviderUnavailableError(providerId, 'TIMEOUT', `${providerId} did not answer in time`);
  const code = errorCode(err);
  // Anything else is treated as "maybe processed": a lookup settles it, a wrong NOT_SENT could charge twice.
  const kind: UnavailableKind = !afterHeaders && code !== undefined && NOT_SENT_CODES.has(code) ? 'NOT_SENT' : 'CONNECTION_CUT';
  // Our words only (an error code, never text the provider sent): this message reaches logs.
  return new ProviderUnavailableError(providerId, kind, `${providerId} call failed: ${code ?? name ?? 'network error'}`);
}

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
    const errors = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
