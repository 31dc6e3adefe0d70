/**
 * One HTTP POST of a webhook: no redirects followed (a 3xx is a failed attempt), a deadline for the
 * status line, the response body drained and discarded (never stored or logged), and connections only
 * to public addresses (plus loopback in sandbox mode), checked after DNS resolution (url-policy.ts).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed, guardedLookup, isLoopbackHost } from './url-policy.js';

export interface SendResult {
  /** The HTTP status, when a response arrived. */
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed (no response, non-2xx); null on success. Never contains the response body. */
  error: string | null;
  ok: boolean;
}

export interface SendOptions {
  timeoutMs: number;
  /** Sandbox mode: loopback receivers (over plain http too) are allowed. */
  allowLoopback: boolean;
  signal?: AbortSignal;
}

const MAX_DRAIN_BYTES = 64 * 1024;

export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const finish = (r: Omit<SendResult, 'latencyMs'>, latencyMs = elapsed()) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...r, latencyMs });
    };
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      finish({ statusCode: null, error: 'invalid endpoint URL', ok: false });
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const loopbackHost = isLoopbackHost(host);
    const literalRefused = isIP(host) !== 0 && !addressAllowed(host, options.allowLoopback);
    const plainRefused = url.protocol !== 'https:' && !(options.allowLoopback && loopbackHost);
    if (literalRefused || plainRefused || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      finish({ statusCode: null, error: 'the endpoint address is not allowed', ok: false });
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'payorch-webhooks/1', connection: 'close' },
      lookup: guardedLookup(options.allowLoopback),
    });
    timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms`, ok: false });
      req.destroy();
    }, options.timeoutMs);
    onAbort = () => {
      finish({ statusCode: null, error: 'aborted: the service is shutting down', ok: false });
      req.destroy();
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      // The status line decides; the body is drained briefly (so the receiver can finish writing) and never kept.
      finish({ statusCode: status || null, error: ok ? null : `the endpoint answered ${status}`, ok });
      let seen = 0;
      const cutoff = setTimeout(() => req.destroy(), 1_000);
      cutoff.unref();
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_DRAIN_BYTES) req.destroy();
      });
      res.on('close', () => clearTimeout(cutoff));
      res.on('error', () => {});
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish({ statusCode: null, error: `request failed: ${err.code ?? err.message}`.slice(0, 1024), ok: false });
    });
    req.end(body);
  });
}
