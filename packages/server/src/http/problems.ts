/**
 * The error catalogue (docs/design.md §3): every code the service answers, with its status and title, in one
 * place. Handlers return `problem(code, detail)` as a reply; anything else that goes wrong is mapped
 * to one of these by the error middleware.
 */
import { createRequire } from 'node:module';
import type { Problem } from '@payorch/types';

export const PROBLEMS = {
  INVALID_REQUEST: { status: 400, title: 'Invalid request' },
  INVALID_CREDENTIALS: { status: 401, title: 'Invalid credentials' },
  INVALID_ACCOUNT_ID: { status: 403, title: 'Invalid account id' },
  PCI_CERTIFICATION_REQUIRED: { status: 403, title: 'PCI certification required' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  CUSTOMER_NOT_FOUND: { status: 404, title: 'Customer not found' },
  PAYMENT_NOT_FOUND: { status: 404, title: 'Payment not found' },
  TRANSACTION_NOT_FOUND: { status: 404, title: 'Transaction not found' },
  PAYMENT_METHOD_NOT_FOUND: { status: 404, title: 'Payment method not found' },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 404, title: 'Webhook endpoint not found' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, title: 'Webhook delivery not found' },
  EVENT_NOT_FOUND: { status: 404, title: 'Event not found' },
  ORGANIZATION_NOT_FOUND: { status: 404, title: 'Organization not found' },
  API_KEY_NOT_FOUND: { status: 404, title: 'API key not found' },
  ROUTING_NOT_FOUND: { status: 404, title: 'Routing not found' },
  CONNECTION_NOT_FOUND: { status: 404, title: 'Connection not found' },
  CHECKOUT_SESSION_NOT_FOUND: { status: 404, title: 'Checkout session not found' },
  CUSTOMER_SESSION_NOT_FOUND: { status: 404, title: 'Customer session not found' },
  PAYMENT_LINK_NOT_FOUND: { status: 404, title: 'Payment link not found' },
  TOKEN_NOT_FOUND: { status: 404, title: 'One-time token not found' },
  UNSUPPORTED_METHOD: { status: 405, title: 'Method not allowed' },
  REQUEST_IN_PROCESS: { status: 409, title: 'Request in process' },
  INVALID_STATUS: { status: 409, title: 'Invalid status' },
  CHARGEBACK_IN_PROCESS: { status: 409, title: 'Chargeback in process' },
  REFUND_NOT_SUPPORTED: { status: 409, title: 'Refund not supported' },
  CUSTOMER_ID_DUPLICATED: { status: 409, title: 'Customer id duplicated' },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: { status: 409, title: 'Webhook endpoint limit reached' },
  WEBHOOK_ALREADY_EXISTS: { status: 409, title: 'Webhook already exists' },
  ROUTING_ALREADY_EXISTS: { status: 409, title: 'Routing already exists' },
  CONNECTION_IN_USE: { status: 409, title: 'Connection in use' },
  CONNECTION_LIMIT_REACHED: { status: 409, title: 'Connection limit reached' },
  TOKEN_ALREADY_USED: { status: 409, title: 'One-time token already used' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  INVALID_CARD: { status: 422, title: 'Invalid card' },
  INVALID_EVIDENCE: { status: 422, title: 'Invalid evidence' },
  PAYMENT_METHOD_TYPE_NOT_SUPPORTED: { status: 422, title: 'Payment method type not supported' },
  INVALID_AMOUNT: { status: 422, title: 'Invalid amount' },
  PROVIDER_DECLINED: { status: 422, title: 'Declined by the provider' },
  NO_ROUTE: { status: 422, title: 'No route' },
  PROVIDER_NOT_AVAILABLE: { status: 422, title: 'Provider not available' },
  ROUTING_VALIDATION_FAILED: { status: 422, title: 'Routing validation failed' },
  CONNECTION_VALIDATION_FAILED: { status: 422, title: 'Connection validation failed' },
  TOKEN_EXPIRED: { status: 422, title: 'One-time token expired' },
  TOKEN_MISMATCH: { status: 422, title: 'One-time token does not fit the payment' },
  RATE_LIMITED: { status: 429, title: 'Rate limited' },
  CONCURRENCY_LIMITED: { status: 429, title: 'Too many concurrent requests' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
  NOT_IMPLEMENTED: { status: 501, title: 'Not implemented' },
  PROVIDER_UNAVAILABLE: { status: 502, title: 'Provider unavailable' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;
export type ProblemStatus<C extends ProblemCode> = (typeof PROBLEMS)[C]['status'];
export type FieldError = { path: string; message: string };

const TYPE_BASE = 'https://docs.payorch.dev/problems/';

/** The request-independent part of a problem; `request_id` and `instance` are added when it is sent. */
export interface ProblemReply<C extends ProblemCode = ProblemCode> {
  status: ProblemStatus<C>;
  body: Problem;
  headers?: Record<string, string>;
}

export function problemBody(
  code: ProblemCode,
  detail: string,
  extra: { errors?: FieldError[]; messages?: string[]; [member: string]: unknown } = {},
): Problem {
  const { status, title } = PROBLEMS[code];
  const { errors, messages, ...members } = extra;
  return fitProblem({
    type: TYPE_BASE + code.toLowerCase().replaceAll('_', '-'),
    title,
    status,
    detail,
    code,
    messages: messages ?? (errors && errors.length > 0 ? errors.map(describe) : [detail]),
    // Filled in by the sender, which knows the request; present here so the body is always complete.
    request_id: '',
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...members,
  });
}

/** A reply for a handler to return: `return problem('CUSTOMER_NOT_FOUND', 'No customer …')`. */
export function problem<C extends ProblemCode>(
  code: C,
  detail: string,
  extra: { errors?: FieldError[]; headers?: Record<string, string>; [member: string]: unknown } = {},
): ProblemReply<C> & { status: ProblemStatus<C> } {
  const { headers, ...rest } = extra;
  return { status: PROBLEMS[code].status, body: problemBody(code, detail, rest), ...(headers ? { headers } : {}) };
}

/** Thrown from deep inside a service when the whole operation must stop with this problem. */
export class ProblemError extends Error {
  constructor(readonly reply: ProblemReply) {
    super(reply.body.detail ?? reply.body.title);
    this.name = 'ProblemError';
  }
}

/**
 * A failure answered with a problem and logged as an error (its `cause`, with the request) by the error
 * handler (errors.ts): idempotency's UnrecordedOutcomeError, a provider called whose outcome could not be
 * recorded. Declared here so http knows it without importing the domains that throw it.
 */
export abstract class ProblemFailure extends Error {
  /** What the client is answered. */
  abstract readonly reply: ProblemReply;
  /** The error line logged with `cause`. */
  abstract readonly logMessage: string;
}

const describe = (e: FieldError) => `${e.path} ${e.message}`;

type Bounds = { maxLength?: number; maxItems?: number; items?: Bounds };
/** The Problem schema's own caps (spec/components/schemas/Problem.yaml), read from the bundled spec. */
const CAPS = (() => {
  const schemas = (createRequire(import.meta.url)('@payorch/types/openapi.json') as { components: { schemas: Record<string, { properties: Record<string, Bounds> }> } }).components.schemas;
  const problem = schemas.Problem!.properties;
  const fieldError = schemas.ProblemFieldError!.properties;
  const cap = (b: Bounds | undefined, key: 'maxLength' | 'maxItems') => {
    const value = b?.[key];
    if (value === undefined) throw new Error(`the Problem schema has no ${key}: an error body must stay bounded`);
    return value;
  };
  return {
    detail: cap(problem.detail, 'maxLength'),
    instance: cap(problem.instance, 'maxLength'),
    messages: cap(problem.messages, 'maxItems'),
    message: cap(problem.messages?.items, 'maxLength'),
    errors: cap(problem.errors, 'maxItems'),
    errorPath: cap(fieldError.path, 'maxLength'),
    errorMessage: cap(fieldError.message, 'maxLength'),
  };
})();

/** At most `max` characters (UTF-16 code units, so never more code points), marked when cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1); // never leave half a surrogate pair
  return `${cut}…`;
}

/** A list cut to `max` entries; when cut, the last entry says how many more there were. */
function capList<T>(list: T[], max: number, more: (hidden: number) => T): T[] {
  return list.length <= max ? list : [...list.slice(0, max - 1), more(list.length - max + 1)];
}

/**
 * Keeps a problem within the Problem schema whatever produced it: lists capped (the last message says
 * how many more there were), strings clipped. An error answer must never be unbounded itself.
 */
export function fitProblem(body: Problem): Problem {
  const fitted: Problem = { ...body, messages: capList(body.messages, CAPS.messages, (n) => `and ${n} more`).map((m) => clip(m, CAPS.message)) };
  if (body.detail !== undefined) fitted.detail = clip(body.detail, CAPS.detail);
  if (body.instance !== undefined) fitted.instance = clip(body.instance, CAPS.instance);
  if (body.errors !== undefined) {
    fitted.errors = body.errors.slice(0, CAPS.errors).map((e) => ({ path: clip(e.path, CAPS.errorPath), message: clip(e.message, CAPS.errorMessage) }));
  }
  return fitted;
}

/** The detail of a validation problem: every invalid input, or when they do not fit, their count and the first ones. */
export function describeFieldErrors(errors: FieldError[]): string {
  if (errors.length === 0) return 'The request is invalid.';
  const named = errors.slice(0, CAPS.errors).map(describe).join('; ');
  const all = `The request is invalid: ${named}.`;
  if (errors.length <= CAPS.errors && all.length <= CAPS.detail) return all;
  return clip(`The request has ${errors.length} invalid inputs; the first ones: ${named}`, CAPS.detail);
}
