import type { RequestHandler } from 'express';
import { problemBody } from './problems.js';
import { sendProblem } from './send.js';

/** JSON path of the first string (or member name) holding U+0000, if any. */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, member] of Object.entries(value)) {
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (key.includes('\u0000')) return at;
    const found = nulPath(member, at);
    if (found) return found;
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold U+0000, so a string with one would fail at the database as a 500.
 * It is a client mistake: answer 400 naming the field before anything runs (found by the fuzz tests).
 */
export const rejectNulCharacters: RequestHandler = (req, res, next) => {
  const at = nulPath(req.body, '/body');
  if (!at) return next();
  return sendProblem(req, res, 400, problemBody('INVALID_REQUEST', `The request is invalid: ${at} must not contain NUL (\\u0000) characters.`, {
    errors: [{ path: at, message: 'must not contain NUL (\\u0000) characters' }],
  }));
};
