/**
 * A `fetch` wrapper that adds a per-attempt timeout and retries with exponential backoff and jitter.
 *
 * Retried: network errors, timeouts, 429, 503 and 409 `REQUEST_IN_PROCESS` — but only for GET/HEAD and
 * for requests carrying `X-Idempotency-Key` (the server replays those safely). Every attempt sends the
 * same request, so the same idempotency key. `Retry-After` (seconds or an HTTP date) is honoured when it
 * asks for at most a minute; longer asks are ignored in favour of the backoff, as Stripe's SDK does.
 */
import { PayorchConnectionError } from './errors.js';

export type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (0 disables retrying). */
  maxRetries: number;
  /** Per-attempt limit until the response headers arrive, in ms (0 or Infinity: none). */
  timeoutMs: number;
  /** First backoff delay, doubled after each retry. */
  initialRetryDelayMs: number;
  /** Cap of the backoff delay. */
  maxRetryDelayMs: number;
}

/** `Retry-After` values above this are not honoured (the backoff is used instead). */
export const MAX_RETRY_AFTER_MS = 60_000;

const RETRYABLE_STATUSES = new Set([409, 429, 503]);

function isRetryableRequest(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('x-idempotency-key');
}

async function isRetryableResponse(response: Response): Promise<boolean> {
  if (!RETRYABLE_STATUSES.has(response.status)) return false;
  if (response.status !== 409) return true;
  // 409 is retryable only while the same key is still executing; INVALID_STATUS and others are final.
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return body.code === 'REQUEST_IN_PROCESS';
  } catch {
    return false;
  }
}

/** `Retry-After` in ms, or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with "equal jitter": half the step fixed, half random, so delays keep growing. */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, 'initialRetryDelayMs' | 'maxRetryDelayMs'>, random = Math.random): number {
  const step = Math.min(policy.maxRetryDelayMs, policy.initialRetryDelayMs * 2 ** retry);
  return step / 2 + random() * (step / 2);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** One attempt's signal: aborted by the caller's signal or by the timeout, whichever comes first. */
function attemptSignal(caller: AbortSignal | null, timeoutMs: number) {
  const controller = new AbortController();
  let timedOut = false;
  if (caller) {
    if (caller.aborted) controller.abort(caller.reason);
    // Kept for the attempt's lifetime so the caller can also abort reading the body.
    else caller.addEventListener('abort', () => controller.abort(caller.reason), { once: true });
  }
  const timer =
    timeoutMs > 0 && Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new TimeoutError(`no response within ${timeoutMs} ms`));
        }, timeoutMs)
      : undefined;
  return { signal: controller.signal, done: () => clearTimeout(timer), timedOut: () => timedOut };
}

export function retryingFetch(baseFetch: FetchLike, policy: RetryPolicy): FetchLike {
  return async (input, init) => {
    const retryable = isRetryableRequest(input);
    const caller = input.signal;
    for (let attempt = 1; ; attempt++) {
      const mayRetry = retryable && attempt <= policy.maxRetries;
      const attemptOf = attemptSignal(caller, policy.timeoutMs);
      // A clone per attempt: a body can be read once, and every attempt sends the same bytes and headers.
      const request = new Request(mayRetry ? input.clone() : input, { signal: attemptOf.signal });
      let response: Response;
      try {
        response = await (init === undefined ? baseFetch(request) : baseFetch(request, init));
      } catch (error) {
        if (caller?.aborted) throw caller.reason ?? error;
        const timedOut = attemptOf.timedOut();
        if (!mayRetry) {
          const what = timedOut ? `timed out after ${policy.timeoutMs} ms` : `failed: ${error instanceof Error ? error.message : String(error)}`;
          throw new PayorchConnectionError(`${input.method} ${input.url} ${what} (${attempt} attempt${attempt > 1 ? 's' : ''})`, {
            cause: error,
            timedOut,
            attempts: attempt,
          });
        }
        await sleep(backoffDelay(attempt - 1, policy), caller);
        continue;
      } finally {
        attemptOf.done();
      }
      if (!mayRetry || !(await isRetryableResponse(response))) return response;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const backoff = backoffDelay(attempt - 1, policy);
      const delay = retryAfter !== undefined && retryAfter <= MAX_RETRY_AFTER_MS ? Math.max(backoff, retryAfter) : backoff;
      // Release the connection; not awaited, since a tee'd body's cancel settles only when every branch is done.
      response.body?.cancel().catch(() => {});
      await sleep(delay, caller);
    }
  };
}
