import type { Request, Response } from 'express';
import type { Problem } from '@payorch/types';
import { bodyLeftUnread, closeAfterLingering } from './lingering-close.js';
import { fitProblem } from './problems.js';
import { serializedJson } from './serialized-json.js';

/** What a handler answers (a problem is one: problems.ts ProblemReply), sent by sendReply. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The request id (set by the request-id middleware) of this exchange. */
export function requestIdOf(res: Response): string {
  return (res.locals.requestId as string | undefined) ?? '';
}

function completeProblem(req: Request, res: Response, body: Problem): Problem {
  return fitProblem({ ...body, request_id: requestIdOf(res), instance: req.originalUrl.split('?')[0] ?? req.originalUrl });
}

/**
 * Sends a handler's reply. JSON goes through res.json, so the validator checks it against the spec when
 * response validation is on; problems get this request's id and path; a string is sent as text. Without
 * response validation (`reuseJson`), a body already serialized for its ETag is sent as that text.
 */
export function sendReply(req: Request, res: Response, reply: Reply, options: { reuseJson?: boolean } = {}): void {
  if (reply.headers) res.set(reply.headers);
  res.status(reply.status);
  if (reply.body === undefined) {
    res.end();
  } else if (typeof reply.body === 'string') {
    // Text a caller expects as is (a provider's notification acknowledgement): its own Content-Type or text/plain.
    if (!res.get('Content-Type')) res.type('text/plain');
    res.send(reply.body);
  } else if (reply.status >= 400) {
    res.type('application/problem+json').json(completeProblem(req, res, reply.body as Problem));
  } else {
    const text = options.reuseJson ? serializedJson(reply.body) : undefined;
    if (text !== undefined) res.type('application/json').send(text);
    else res.json(reply.body);
  }
}

/**
 * Sends a problem produced outside a handler (validation, auth, faults). It bypasses the response
 * validator on purpose: the error path must never fail again on its own answer.
 */
export function sendProblem(req: Request, res: Response, status: number, body: Problem, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.set(headers);
  // Refused before its body was read (too large, unauthenticated, unknown route…): don't read the rest.
  if (bodyLeftUnread(req)) closeAfterLingering(req, res);
  res.status(status).type('application/problem+json').send(JSON.stringify(completeProblem(req, res, body)));
}
