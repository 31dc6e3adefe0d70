/**
 * @payorch/client: a typed client for the payorch API, generated from the same spec as the server
 * (openapi-fetch + @payorch/types). Runs anywhere `fetch` exists: Node ≥ 20, browsers, Deno, Bun.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from '@payorch/types';

export type { paths, components, operations, Problem, Schemas } from '@payorch/types';

export interface PayorchClientOptions {
  /** The API's base address including the version segment, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  publicApiKey: string;
  privateSecretKey: string;
  /** A custom fetch (tests, proxies, instrumentation). */
  fetch?: typeof globalThis.fetch;
}

export type PayorchClient = Client<paths>;

/** Sets the credential headers on every request. */
export function credentialsMiddleware(publicApiKey: string, privateSecretKey: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('public-api-key', publicApiKey);
      request.headers.set('private-secret-key', privateSecretKey);
      return request;
    },
  };
}

export function createPayorchClient(options: PayorchClientOptions): PayorchClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  client.use(credentialsMiddleware(options.publicApiKey, options.privateSecretKey));
  return client;
}
