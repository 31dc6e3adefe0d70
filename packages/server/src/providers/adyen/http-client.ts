/**
 * The transport given to `@adyen/api-library`'s Client (its `ClientInterface`): every SDK call goes through
 * our bounded fetch (../http/bounded-fetch.ts), so it runs under the connection's timeout, reads at most
 * 64 KiB of answer (more is BAD_RESPONSE) and fails with our ProviderUnavailableError kinds. The SDK's own
 * client would read any length, and its error messages quote the answer's body.
 *
 * The SDK builds each endpoint's full URL (https://checkout-test.adyen.com/v72/payments, the LIVE host with the
 * connection's live_url_prefix, https://ca-test.adyen.com/ca/services/DisputeService/v30/…). Its Config has
 * no endpoint override for Checkout or Disputes, so when the operator (ADYEN_API_URL) or a test (the double)
 * names another host, this transport keeps the path and replaces the origin: the double serves Adyen's paths.
 *
 * No retries here: the orchestrator decides (a retry goes out with the same Idempotency-Key).
 */
import type { Config } from '@adyen/api-library';
import { boundedFetch } from '../http/bounded-fetch.js';
import { ProviderUnavailableError } from '../provider.js';

/** The request options the SDK hands its transport (IRequest.Options of the SDK, the parts used here). */
interface SdkRequestOptions {
  method?: string;
  idempotencyKey?: string;
  params?: Record<string, string> | string;
  headers?: Record<string, string | string[] | number | undefined>;
}

/** An HTTP answer outside 2xx, with its parsed body when it is a JSON object (Adyen's ServiceError). */
export class AdyenHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown> | null,
  ) {
    // Our words only: the body is the provider's and stays out of messages (they reach logs).
    super(`Adyen answered HTTP ${status}`);
    this.name = 'AdyenHttpError';
  }
}

export class BoundedAdyenHttpClient {
  /**
   * The last 2xx answer as Adyen sent it, parsed. One transport serves one call (adapter.ts makes a client per
   * call), so this is that call's answer: the SDK's typed models drop members they do not declare (a stored
   * modification answer replayed on /payments, see adapter.ts lookup), and the raw answer is kept as received.
   */
  lastBody: Record<string, unknown> | null = null;

  constructor(
    private readonly providerId: string,
    private readonly timeoutMs: number,
    /** Another origin for every endpoint (ADYEN_API_URL; tests: the double), else Adyen's own hosts. */
    private readonly baseUrl: string | undefined,
  ) {}

  async request(endpoint: string, json: string | Buffer, config: Config, _isApiKeyRequired: boolean, options: SdkRequestOptions = {}): Promise<string> {
    const method = (options.method ?? 'POST').toUpperCase();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': config.apiKey ?? '',
      'user-agent': 'payorch adyen-node-api-library',
    };
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const res = await boundedFetch(this.providerId, this.timeoutMs)(this.target(endpoint, options.params), {
      method,
      headers,
      ...(method === 'GET' ? {} : { body: typeof json === 'string' ? json : new Uint8Array(json) }),
    });
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) {
      // The SDK would hand a body that is not JSON on as a string (and warn on the console): not an answer.
      this.lastBody = parseObject(text);
      if (this.lastBody === null) throw new ProviderUnavailableError(this.providerId, 'BAD_RESPONSE', `${this.providerId} answered HTTP ${res.status} with a body that is not a JSON object`);
      return text;
    }
    // A 5xx is no answer we can act on (Adyen may have acted: the operation is looked up later).
    if (res.status >= 500) throw new ProviderUnavailableError(this.providerId, 'BAD_RESPONSE', `${this.providerId} answered HTTP ${res.status}`);
    throw new AdyenHttpError(res.status, parseObject(text));
  }

  private target(endpoint: string, params: SdkRequestOptions['params']): string {
    const url = new URL(endpoint);
    const query = params === undefined ? '' : new URLSearchParams(params).toString();
    const path = `${url.pathname}${query ? `?${query}` : url.search}`;
    return this.baseUrl ? `${this.baseUrl}${path}` : `${url.origin}${path}`;
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
