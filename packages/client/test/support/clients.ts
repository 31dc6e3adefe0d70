/** Clients for the shared test server (started by global-setup.ts), and the spec's operation list. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Middleware } from 'openapi-fetch';
import { createPayorchAdminClient, createPayorchClient, type PayorchClientOptions } from '../../src/index.js';
import { WORKSPACE_ROOT } from './server.js';

export function server() {
  return inject('payorch');
}

/** A merchant client with the sandbox organization's key pair (PCI certified). */
export function sandboxClient(options: Partial<PayorchClientOptions> = {}) {
  const { baseUrl, sandbox } = server();
  return createPayorchClient({ baseUrl, publicApiKey: sandbox.public_api_key, privateSecretKey: sandbox.private_secret_key, ...options });
}

export function adminClient() {
  const { baseUrl, adminApiKey } = server();
  return createPayorchAdminClient({ baseUrl, adminApiKey });
}

/** Every operation of the bundled spec as `METHOD /path` → operationId. */
export function specOperations(): Map<string, string> {
  const spec = JSON.parse(readFileSync(join(WORKSPACE_ROOT, 'packages/types/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const ops = new Map<string, string>();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) if (op.operationId) ops.set(`${method.toUpperCase()} ${path}`, op.operationId);
  }
  return ops;
}

/** Middleware that records each call's `METHOD /schema/path` and the headers it went out with. */
export function recorder() {
  const calls: { route: string; headers: Headers }[] = [];
  const middleware: Middleware = {
    onRequest({ request, schemaPath }) {
      calls.push({ route: `${request.method} ${schemaPath}`, headers: new Headers(request.headers) });
    },
  };
  return { calls, middleware, last: () => calls.at(-1)! };
}

/** A card expiry two years ahead (two-digit year, as the API wants). */
export function futureExpiry() {
  return { expiration_month: 12, expiration_year: (new Date().getUTCFullYear() + 2) % 100 };
}

export const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;
