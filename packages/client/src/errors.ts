/**
 * What the client throws. `PayorchError`: the API answered with an error (a problem+json body).
 * `PayorchConnectionError`: no answer at all (network failure or timeout), after any retries.
 */
import type { Problem, Schemas } from '@payorch/types';

/** The codes the API documents (design §3); other strings are possible, so branch with a fallback. */
export type PayorchErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_CREDENTIALS'
  | 'INVALID_ACCOUNT_ID'
  | 'PCI_CERTIFICATION_REQUIRED'
  | 'NOT_FOUND'
  | 'CUSTOMER_NOT_FOUND'
  | 'PAYMENT_NOT_FOUND'
  | 'TRANSACTION_NOT_FOUND'
  | 'PAYMENT_METHOD_NOT_FOUND'
  | 'ORGANIZATION_NOT_FOUND'
  | 'API_KEY_NOT_FOUND'
  | 'WEBHOOK_ENDPOINT_NOT_FOUND'
  | 'WEBHOOK_DELIVERY_NOT_FOUND'
  | 'ROUTING_NOT_FOUND'
  | 'CONNECTION_NOT_FOUND'
  | 'UNSUPPORTED_METHOD'
  | 'REQUEST_IN_PROCESS'
  | 'INVALID_STATUS'
  | 'CHARGEBACK_IN_PROCESS'
  | 'CUSTOMER_ID_DUPLICATED'
  | 'ROUTING_ALREADY_EXISTS'
  | 'WEBHOOK_ENDPOINT_LIMIT_REACHED'
  | 'WEBHOOK_ALREADY_EXISTS'
  | 'NO_ROUTE'
  | 'ROUTING_VALIDATION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INVALID_CARD'
  | 'INVALID_EVIDENCE'
  | 'INVALID_AMOUNT'
  | 'PROVIDER_DECLINED'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'NOT_IMPLEMENTED'
  /** A capture, cancel or refund the provider did not answer: retry with the same idempotency key to learn the outcome. */
  | 'PROVIDER_UNAVAILABLE'
  | 'SERVICE_UNAVAILABLE'
  /** An error answer without a problem body (e.g. from a proxy). */
  | 'UNEXPECTED_RESPONSE'
  | (string & {});

export type ProblemFieldError = Schemas['ProblemFieldError'];

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string';
}

/** The API answered with an error status. Branch on `code`, quote `request_id` to support. */
export class PayorchError extends Error {
  override readonly name = 'PayorchError';
  /** The HTTP status. */
  readonly status: number;
  /** The stable machine code, e.g. `CUSTOMER_ID_DUPLICATED`. */
  readonly code: PayorchErrorCode;
  /** Human-readable messages. */
  readonly messages: string[];
  /** For validation problems, one entry per invalid input (`path` like `/body/evidence/0/content`). */
  readonly errors: ProblemFieldError[];
  /** The request's id (problem body or `X-Request-Id` header). */
  readonly request_id: string | undefined;
  /** The whole problem body, when the answer had one (e.g. `existing_customer_id`). */
  readonly problem: Problem | undefined;
  /** The HTTP response (its body has been read). */
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    const status = response.status;
    const code = problem?.code ?? 'UNEXPECTED_RESPONSE';
    const messages = problem?.messages ?? [typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status} ${response.statusText}`.trim()];
    const request_id = problem?.request_id ?? response.headers.get('x-request-id') ?? undefined;
    super(`${status} ${code}: ${problem?.detail ?? messages.join(' ')}${request_id ? ` (request_id ${request_id})` : ''}`);
    this.status = status;
    this.code = code;
    this.messages = messages;
    this.errors = problem?.errors ?? [];
    this.request_id = request_id;
    this.problem = problem;
    this.response = response;
  }
}

/** No answer: the connection failed or every attempt timed out. Retrying later may succeed. */
export class PayorchConnectionError extends Error {
  override readonly name = 'PayorchConnectionError';
  /** True when the last attempt was stopped by `timeoutMs`. */
  readonly timedOut: boolean;
  /** How many attempts were made. */
  readonly attempts: number;

  constructor(message: string, options: { cause: unknown; timedOut: boolean; attempts: number }) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut;
    this.attempts = options.attempts;
  }
}
