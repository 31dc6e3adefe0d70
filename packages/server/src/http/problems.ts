/**
 * The error catalogue (design.md §3): every code the service answers, with its status and title, in one
 * place. Handlers return `problem(code, detail)` as a reply; anything else that goes wrong is mapped
 * to one of these by the error middleware.
 */
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
  ORGANIZATION_NOT_FOUND: { status: 404, title: 'Organization not found' },
  API_KEY_NOT_FOUND: { status: 404, title: 'API key not found' },
  UNSUPPORTED_METHOD: { status: 405, title: 'Method not allowed' },
  REQUEST_IN_PROCESS: { status: 409, title: 'Request in process' },
  INVALID_STATUS: { status: 409, title: 'Invalid status' },
  CUSTOMER_ID_DUPLICATED: { status: 409, title: 'Customer id duplicated' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  INVALID_CARD: { status: 422, title: 'Invalid card' },
  INVALID_EVIDENCE: { status: 422, title: 'Invalid evidence' },
  PAYMENT_METHOD_TYPE_NOT_SUPPORTED: { status: 422, title: 'Payment method type not supported' },
  RATE_LIMITED: { status: 429, title: 'Rate limited' },
  INTERNAL_ERROR: { status: 500, title: 'Internal error' },
  NOT_IMPLEMENTED: { status: 501, title: 'Not implemented' },
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
  return {
    type: TYPE_BASE + code.toLowerCase().replaceAll('_', '-'),
    title,
    status,
    detail,
    code,
    messages: messages ?? (errors && errors.length > 0 ? errors.map((e) => `${e.path} ${e.message}`) : [detail]),
    // Filled in by the sender, which knows the request; present here so the body is always complete.
    request_id: '',
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...members,
  };
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
