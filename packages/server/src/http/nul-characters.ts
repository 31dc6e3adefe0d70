import type { RequestHandler } from 'express';
import { problemBody } from './problems.js';
import { sendProblem } from './send.js';

/** Deeper than any body the spec describes (ours nest under 10 levels); deeper input is hostile. */
export const MAX_BODY_DEPTH = 32;

type Finding = { path: string; message: string };

const pointer = (path: string, key: string) => `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/**
 * Walks the parsed body without recursion (a hostile body cannot blow the stack) and returns the first
 * string or member name holding U+0000, or the first place nested deeper than MAX_BODY_DEPTH.
 */
function inspect(body: unknown): Finding | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '/body', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path, message: 'must not contain NUL (\\u0000) characters' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) return { path, message: `is nested deeper than ${MAX_BODY_DEPTH} levels` };
    for (const [key, member] of Object.entries(value)) {
      const at = pointer(path, key);
      if (key.includes('\u0000')) return { path: at, message: 'must not contain NUL (\\u0000) characters' };
      stack.push({ value: member, path: at, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * Rejects, before validation and handlers run, what would otherwise surface as a fault: U+0000 (which
 * PostgreSQL text cannot hold; found by the fuzz tests) and absurd nesting (found by the hostile-input
 * tests). Both are client mistakes: 400 naming the place.
 */
export const rejectNulCharacters: RequestHandler = (req, res, next) => {
  const found = inspect(req.body);
  if (!found) return next();
  return sendProblem(req, res, 400, problemBody('INVALID_REQUEST', `The request is invalid: ${found.path} ${found.message}.`, { errors: [found] }));
};
