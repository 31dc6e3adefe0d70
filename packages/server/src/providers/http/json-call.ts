/**
 * A JSON call to a provider over the bounded HTTP path (bounded-request.ts): a 5xx or a body that is not a
 * JSON object → BAD_RESPONSE; any other status is an answer, handed back to the adapter to interpret.
 */
import { ProviderUnavailableError } from '../provider.js';
import { providerRequest } from './bounded-request.js';

export interface ProviderJsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

export async function callProviderJson(
  providerId: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: unknown },
  timeoutMs: number,
): Promise<ProviderJsonAnswer> {
  const res = await providerRequest(
    providerId,
    {
      method: init.method,
      url,
      headers: init.body === undefined ? init.headers : { ...init.headers, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    },
    { timeoutMs },
  );
  if (res.status >= 500) throw new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered HTTP ${res.status}`);
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(res.body);
    const body: unknown = text === '' ? {} : JSON.parse(text);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    return { status: res.status, body: body as Record<string, unknown> };
  } catch {
    throw new ProviderUnavailableError(providerId, 'BAD_RESPONSE', `${providerId} answered HTTP ${res.status} with a body that is not a JSON object`);
  }
}
