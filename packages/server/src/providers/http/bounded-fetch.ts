/**
 * The bounded HTTP path as a WHATWG `fetch`, for connectors built on an official SDK: SDKs take a custom
 * fetch or HTTP client (Stripe: `Stripe.createFetchHttpClient(fetch)`; Adyen and Mercado Pago: a client
 * whose request method can call this), so their calls get the same deadline and answer limit as ours.
 * The Response it resolves with holds the whole (bounded) body already; failures reject with the
 * ProviderUnavailableError of bounded-request.ts, which the connector lets through to the orchestrator.
 */
import { providerRequest } from './bounded-request.js';

export type BoundedFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch for one call's connection: `timeoutMs` is the deadline of each exchange made through it. */
export function boundedFetch(providerId: string, timeoutMs: number): BoundedFetch {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : String(input);
    const method = init.method ?? request?.method ?? 'GET';
    const headers = Object.fromEntries(new Headers(init.headers ?? request?.headers).entries());
    const body = init.body ?? (request?.body ? await request.arrayBuffer() : undefined);
    const answer = await providerRequest(
      providerId,
      { method, url, headers, body: body === undefined || body === null ? undefined : await bytesOf(body) },
      { timeoutMs, signal: init.signal ?? request?.signal ?? undefined },
    );
    const nullBody = answer.status === 204 || answer.status === 304 || (answer.status >= 100 && answer.status < 200);
    // The body is already decoded: its encoding headers no longer describe it.
    const responseHeaders = new Headers(answer.headers);
    responseHeaders.delete('content-encoding');
    responseHeaders.delete('content-length');
    return new Response(nullBody ? null : answer.body, { status: answer.status, headers: responseHeaders });
  };
}

async function bytesOf(body: BodyInit): Promise<string | Uint8Array<ArrayBuffer>> {
  if (typeof body === 'string') return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
}
