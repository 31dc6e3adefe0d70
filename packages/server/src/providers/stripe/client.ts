/**
 * The Stripe SDK, one client per connection: the connection's secret key, its timeout, no SDK-side
 * retries (our orchestrator and reconciliation decide), our bounded fetch as the transport (64 KiB answers,
 * one deadline), and Stripe's public API or the operator's STRIPE_API_URL (tests: the local double).
 * Errors the SDK raises are sorted here: no usable answer → ProviderUnavailableError; an answer → the
 * caller maps it to a result (declines are results, never exceptions).
 */
import Stripe from 'stripe';
import { boundedFetch } from '../http/bounded-fetch.js';
import { ProviderUnavailableError, type ConnectionContext } from '../provider.js';
import { rawOf } from './transformers.js';

export const STRIPE = 'STRIPE';

/** The API version the adapter and the double speak (the SDK's own pinned version). */
export const STRIPE_API_VERSION = (Stripe as unknown as { API_VERSION?: string }).API_VERSION;

/** The host options for a base URL (http://127.0.0.1:1234), or none for Stripe's public hosts. */
export function hostOptions(baseUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!baseUrl) return {};
  const url = new URL(baseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

// One client per connection, kept while its key, timeout and host stay the same (building one costs ~0.3 ms
// of CPU: it sets up every Stripe resource). Bounded: the oldest goes first.
const CLIENTS_MAX = 1_000;
const clients = new Map<string, { fingerprint: string; client: Stripe }>();

/**
 * The client for a connection. The SDK's own timeout is left a second past ours: the bounded fetch's
 * deadline fires first and says TIMEOUT (the SDK's abort would look like a cut connection).
 */
export function stripeClient(connection: ConnectionContext, baseUrl: string | undefined): Stripe {
  const key = connection.credentials.secret_key;
  if (!key) throw new ProviderUnavailableError(STRIPE, 'NOT_SENT', 'STRIPE connection has no secret_key');
  const fingerprint = `${key}\u0000${connection.timeoutMs}\u0000${baseUrl ?? ''}`;
  const cached = clients.get(connection.connectionId);
  if (cached && cached.fingerprint === fingerprint) return cached.client;
  const client = newClient(key, connection.timeoutMs, baseUrl);
  clients.delete(connection.connectionId);
  if (clients.size >= CLIENTS_MAX) clients.delete(clients.keys().next().value!);
  clients.set(connection.connectionId, { fingerprint, client });
  return client;
}

function newClient(key: string, timeoutMs: number, baseUrl: string | undefined): Stripe {
  return new Stripe(key, {
    ...hostOptions(baseUrl),
    httpClient: Stripe.createFetchHttpClient(boundedFetch(STRIPE, timeoutMs)),
    maxNetworkRetries: 0,
    timeout: timeoutMs + 1_000,
    telemetry: false,
  });
}

/** What a Stripe call ended with when it did not resolve. */
export type StripeFailure =
  /** A card error (402): the decline, with the PaymentIntent when Stripe made one. */
  | { kind: 'card'; code: string | null; declineCode: string | null; paymentIntentId: string | null; raw: Record<string, unknown> }
  /** Stripe answered and refused the call (4xx that is not a decline). */
  | { kind: 'refused'; status: number; type: string; code: string | null; raw: Record<string, unknown> };

/**
 * Runs one SDK call. Resolves with its answer, or with the Stripe error as a StripeFailure; throws
 * ProviderUnavailableError when there is no usable answer (not sent, timeout, cut, 5xx, unreadable).
 */
export async function callStripe<T>(run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; failure: StripeFailure }> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw err;
    if (!(err instanceof Stripe.errors.StripeError)) throw err;
    if (err instanceof Stripe.errors.StripeConnectionError) {
      const detail = (err as { detail?: unknown }).detail;
      if (detail instanceof ProviderUnavailableError) throw detail;
      const timedOut = (detail as { code?: unknown } | undefined)?.code === 'ETIMEDOUT';
      throw new ProviderUnavailableError(STRIPE, timedOut ? 'TIMEOUT' : 'CONNECTION_CUT', timedOut ? 'STRIPE did not answer in time' : 'STRIPE call failed: connection error');
    }
    const status = err.statusCode ?? 0;
    const raw = (err.raw ?? {}) as Record<string, unknown>;
    // 5xx, or a body that is not Stripe's JSON: nothing we can read. Retried by reconciliation (maybe processed).
    if (status >= 500 || status === 0 || err instanceof Stripe.errors.StripeAPIError) {
      throw new ProviderUnavailableError(STRIPE, 'BAD_RESPONSE', `STRIPE answered HTTP ${status || 'with an unreadable body'}`);
    }
    if (err instanceof Stripe.errors.StripeCardError) {
      // The intent the decline belongs to: a PaymentIntent (charges) or a SetupIntent (verification).
      const pi = (raw.payment_intent ?? raw.setup_intent) as { id?: unknown } | undefined;
      return {
        ok: false,
        failure: {
          kind: 'card',
          code: err.code ?? null,
          declineCode: (err.decline_code as string | undefined) ?? null,
          paymentIntentId: typeof pi?.id === 'string' ? pi.id : null,
          raw: withoutHeaders(raw),
        },
      };
    }
    return { ok: false, failure: { kind: 'refused', status, type: err.rawType ?? err.type, code: err.code ?? null, raw: withoutHeaders(raw) } };
  }
}

/** The SDK copies the answer's headers into `raw`: not part of Stripe's error object, not stored. */
function withoutHeaders(raw: Record<string, unknown>): Record<string, unknown> {
  const { headers: _h, statusCode: _s, requestId: _r, ...rest } = raw;
  return rawOf(rest);
}
