/** openapi-fetch middleware: credentials on every call, and an idempotency key where the spec wants one. */
import type { Middleware } from 'openapi-fetch';
import { IDEMPOTENCY_HEADER, IDEMPOTENT_ROUTES } from './paths.js';

/** Sets the given headers on every request, unless the request already carries them (a per-call override). */
export function headersMiddleware(headers: Record<string, string>): Middleware {
  return {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(headers)) {
        if (!request.headers.has(name)) request.headers.set(name, value);
      }
      return request;
    },
  };
}

/** Sets the merchant key pair (`public-api-key`, `private-secret-key`) on every request. */
export function credentialsMiddleware(publicApiKey: string, privateSecretKey: string): Middleware {
  return headersMiddleware({ 'public-api-key': publicApiKey, 'private-secret-key': privateSecretKey });
}

const idempotentRoutes: ReadonlySet<string> = new Set(IDEMPOTENT_ROUTES);

/** A fresh key: a random UUID (WebCrypto, available in Node ≥ 20, browsers, Deno and Bun). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Gives operations whose spec declares `X-Idempotency-Key` a generated key when the caller passed none.
 * It runs once per call, before the retrying fetch, so every retry of the call reuses the same key; a
 * caller's own key is never replaced.
 */
export function idempotencyKeyMiddleware(generate: () => string = newIdempotencyKey): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      if (!request.headers.has(IDEMPOTENCY_HEADER) && idempotentRoutes.has(`${request.method} ${schemaPath}`)) {
        request.headers.set(IDEMPOTENCY_HEADER, generate());
      }
      return request;
    },
  };
}
