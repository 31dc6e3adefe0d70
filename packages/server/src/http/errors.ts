/**
 * Maps every error that reaches Express — the validator's, body-parser's, our own ProblemError, database
 * outages and plain bugs — to docs/design.md §3 problem+json. Nothing internal (stack, SQL, driver text)
 * is ever sent; bugs are logged with the request id and operation instead, as a redacted shape.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import { isDatabaseUnavailable } from '../db/database.js';
import { ConcurrencyLimitedError } from '../db/organization-gate.js';
import type { Logger } from '../platform/logger.js';
import type { FieldMessages } from './field-messages.js';
import { describeFieldErrors, problemBody, ProblemError, ProblemFailure, type FieldError } from './problems.js';
import { sendProblem } from './send.js';
import type { OperationInfo } from './spec.js';

export class NotImplementedError extends Error {
  constructor(readonly operationId: string) {
    super(`${operationId} is not implemented yet`);
  }
}

type ValidatorError = Error & { status?: number; errors?: { path?: string; message?: string; errorCode?: string }[]; type?: string; expose?: boolean; limit?: number };

function fieldErrors(err: ValidatorError, operation: OperationInfo | undefined, messages: FieldMessages): FieldError[] {
  // An if/then's own summary ("must match "then" schema") names no field: the then-branch's errors do (http/discriminators.ts).
  const errors = (err.errors ?? []).filter((e) => e.errorCode !== 'if.openapi.validation').map((e) => {
    const path = pointerOf(e.path ?? '');
    // Pattern, format, length and range errors say what to send, from the field's schema (field-messages.ts).
    return { path, message: messages(operation, path, e.message ?? 'is invalid', e.errorCode) };
  });
  // Each alternative may say the same of one place ("/body must be object"): once is enough.
  return errors.filter((e, i) => errors.findIndex((o) => o.path === e.path && o.message === e.message) === i);
}

/** The validator's path as a JSON pointer. Query parameters are flat: a name with a dot (`data.id`) is one segment. */
function pointerOf(path: string): string {
  const query = /^[./]?query[./](.+)$/.exec(path);
  if (query) return `/query/${query[1]}`;
  return path.replace(/^\.?/, '').replace(/^(?!\/)/, '/').replace(/\./g, '/');
}

export function errorHandler(log: Logger, messages: FieldMessages): ErrorRequestHandler {
  return (err: ValidatorError, req: Request, res: Response, _next) => {
    const send = (status: number, body: ReturnType<typeof problemBody>, headers?: Record<string, string>) =>
      sendProblem(req, res, status, body, headers);

    if (err instanceof ProblemError) return send(err.reply.status, err.reply.body, err.reply.headers);
    if (err instanceof NotImplementedError) {
      return send(501, problemBody('NOT_IMPLEMENTED', `${err.operationId} is part of the contract but not implemented yet.`));
    }

    // body-parser
    if (err.type === 'entity.too.large') {
      return send(413, problemBody('PAYLOAD_TOO_LARGE', `The request body is larger than the ${err.limit ?? ''} bytes this route accepts.`));
    }
    if (err.type === 'entity.parse.failed') {
      return send(400, problemBody('INVALID_REQUEST', 'The request body is not valid JSON.', { errors: [{ path: '/body', message: 'is not valid JSON' }] }));
    }
    if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
      return send(415, problemBody('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json in UTF-8.'));
    }
    if (err.type === 'encoding.invalid') {
      return send(400, problemBody('INVALID_REQUEST', 'The request body is not valid UTF-8.', { errors: [{ path: '/body', message: 'is not valid UTF-8' }] }));
    }
    if (err.type === 'request.aborted' || err.type === 'request.size.invalid') {
      return send(400, problemBody('INVALID_REQUEST', 'The request body was incomplete.'));
    }

    // express-openapi-validator
    const isResponseValidation = (err.errors ?? []).some((e) => (e.path ?? '').startsWith('/response') || (e.path ?? '').startsWith('.response'));
    if (err.status && err.status < 500 && !isResponseValidation) {
      switch (err.status) {
        case 400: {
          const errors = fieldErrors(err, res.locals.operation as OperationInfo | undefined, messages);
          return send(400, problemBody('INVALID_REQUEST', describeFieldErrors(errors), { errors }));
        }
        case 404:
          return send(404, problemBody('NOT_FOUND', `No route ${req.method} ${req.path}.`));
        case 405:
          return send(405, problemBody('UNSUPPORTED_METHOD', `${req.method} is not allowed on ${req.path}.`));
        case 413:
          return send(413, problemBody('PAYLOAD_TOO_LARGE', 'The request body is too large.'));
        case 415:
          return send(415, problemBody('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'));
        default:
          return send(400, problemBody('INVALID_REQUEST', err.message));
      }
    }

    // Every line names the request and the operation; the error goes through the logger's redacting
    // serializer (class, code, message without values: never SQL, parameters or row values).
    const operation = res.locals.operation as OperationInfo | undefined;
    const where = { requestId: res.locals.requestId, route: operation ? `${operation.method.toUpperCase()} ${operation.template}` : req.method, operationId: operation?.operationId };
    // A failure with its own answer, e.g. past a provider call: settle-later, never "nothing was written"
    // (idempotency.ts UnrecordedOutcomeError).
    if (err instanceof ProblemFailure) {
      log.error({ err: err.cause, ...where }, err.logMessage);
      return send(err.reply.status, err.reply.body, err.reply.headers);
    }
    // The organization's concurrent database work is at its bound (db/organization-gate.ts): nothing was done.
    if (err instanceof ConcurrencyLimitedError) {
      log.warn({ ...where, reason: err.reason }, 'organization concurrency limit');
      return send(
        429,
        problemBody('CONCURRENCY_LIMITED', 'Too many of your requests are being processed at once; nothing was done. Retry after the time in Retry-After.'),
        { 'Retry-After': String(err.retryAfterSeconds) },
      );
    }
    if (isDatabaseUnavailable(err)) {
      log.error({ err, ...where }, 'database unavailable');
      return send(503, problemBody('SERVICE_UNAVAILABLE', 'The service cannot reach its database; retry shortly.'), { 'Retry-After': '2' });
    }

    if (isResponseValidation) {
      log.error({ ...where, errors: (err.errors ?? []).map((e) => ({ path: e.path, message: e.message })) }, 'response does not match the spec');
    } else {
      log.error({ err, ...where }, 'unhandled error');
    }
    return send(500, problemBody('INTERNAL_ERROR', 'An unexpected error occurred. Quote the request_id to support.'));
  };
}
