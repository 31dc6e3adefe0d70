/** The two factories: the merchant client (every operation of the spec) and the admin client (`/admin`). */
import createClient, { type Client } from 'openapi-fetch';
import { createAdminResources, createResources, type PayorchAdminResources, type PayorchResources } from './resources.js';
import { credentialsMiddleware, headersMiddleware, idempotencyKeyMiddleware } from './middleware.js';
import type { AdminPaths, PayorchPaths } from './paths.js';
import { retryingFetch, type FetchLike, type RetryPolicy } from './retry.js';

export interface TransportOptions {
  /** The API's base address including the version segment, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  /** A custom fetch (tests, proxies, instrumentation). Defaults to the global `fetch`, looked up per call. */
  fetch?: FetchLike;
  /** Per-attempt timeout until the response headers arrive, in ms. Default 60 000; 0 disables it. */
  timeoutMs?: number;
  /** Retries of a failed GET or idempotency-keyed call (network error, timeout, 409 REQUEST_IN_PROCESS, 429, 503). Default 2. */
  maxRetries?: number;
  /** First backoff delay in ms, doubled per retry, with jitter. Default 500. */
  initialRetryDelayMs?: number;
  /** Backoff cap in ms. Default 8 000. `Retry-After` up to 60 s is honoured above it. */
  maxRetryDelayMs?: number;
}

export interface PayorchClientOptions extends TransportOptions {
  publicApiKey: string;
  privateSecretKey: string;
  /** Generate `X-Idempotency-Key` when a call that needs one has none. Default true. */
  generateIdempotencyKeys?: boolean;
}

export interface PayorchAdminClientOptions extends TransportOptions {
  /** The operator key (the server's `ADMIN_API_KEY`). */
  adminApiKey: string;
}

/** The typed openapi-fetch client (`GET`, `POST`, … over every path of the spec) plus the resource layer. */
export type PayorchClient = Client<PayorchPaths> & PayorchResources;
/** The admin API's client: only `/admin/...` paths, plus `organizations`, `accounts`, `apiKeys`. */
export type PayorchAdminClient = Client<AdminPaths> & PayorchAdminResources;

export const DEFAULTS = { timeoutMs: 60_000, maxRetries: 2, initialRetryDelayMs: 500, maxRetryDelayMs: 8_000 } as const;

function policyOf(options: TransportOptions): RetryPolicy {
  const policy = {
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    initialRetryDelayMs: options.initialRetryDelayMs ?? DEFAULTS.initialRetryDelayMs,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
  };
  for (const [name, value] of Object.entries(policy)) {
    if (typeof value !== 'number' || Number.isNaN(value) || value < 0) throw new TypeError(`payorch: ${name} must be a number ≥ 0, got ${String(value)}`);
  }
  if (!Number.isInteger(policy.maxRetries)) throw new TypeError(`payorch: maxRetries must be an integer, got ${policy.maxRetries}`);
  return policy;
}

function required(value: string | undefined, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`payorch: ${name} is required (got ${value === '' ? 'an empty string' : String(value)})`);
  return value;
}

function transport<Paths extends {}>(options: TransportOptions): Client<Paths> {
  required(options.baseUrl, 'baseUrl');
  const base: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return createClient<Paths>({ baseUrl: options.baseUrl, fetch: retryingFetch(base, policyOf(options)) });
}

/**
 * A client for the merchant API with the organization's key pair on every call:
 *
 *   const payorch = createPayorchClient({ baseUrl, publicApiKey, privateSecretKey });
 *   const customer = await payorch.customers.create({ merchant_customer_id: 'cus-1' });   // throws PayorchError
 *   const { data, error } = await payorch.GET('/payments/{payment_id}', { params: { path: { payment_id } } });
 */
export function createPayorchClient(options: PayorchClientOptions): PayorchClient {
  const client = transport<PayorchPaths>(options);
  client.use(credentialsMiddleware(required(options.publicApiKey, 'publicApiKey'), required(options.privateSecretKey, 'privateSecretKey')));
  if (options.generateIdempotencyKeys !== false) client.use(idempotencyKeyMiddleware());
  return Object.assign(client, createResources(client));
}

/** A client for the operator API (`/admin/...`) with `admin-api-key` on every call. */
export function createPayorchAdminClient(options: PayorchAdminClientOptions): PayorchAdminClient {
  const client = transport<AdminPaths>(options);
  client.use(headersMiddleware({ 'admin-api-key': required(options.adminApiKey, 'adminApiKey') }));
  return Object.assign(client, createAdminResources(client));
}
