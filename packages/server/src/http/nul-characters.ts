import type { RequestHandler } from 'express';
import { describeFieldErrors, problemBody } from './problems.js';
import { sendProblem } from './send.js';

/** Deeper than any body the spec describes (ours nest under 10 levels); deeper input is hostile. */
export const MAX_BODY_DEPTH = 32;

type Finding = { path: string; message: string };

/** `path` + one JSON Pointer segment (RFC 6901 escaping). */
export const pointer = (path: string, key: string) => `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

type Visit = { value: unknown; depth: number; parent?: Visit; key?: string };

/** The JSON Pointer of a visited place, built only for a finding (building one per value cost more than the walk). */
function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reduceRight((path, key) => pointer(path, key), '/body');
}

/**
 * Walks the parsed body without recursion (a hostile body cannot blow the stack) and returns the first
 * string or member name holding U+0000, or the first place nested deeper than MAX_BODY_DEPTH.
 */
function inspect(body: unknown): Finding | undefined {
  const stack: Visit[] = [{ value: body, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path: pathOf(visit), message: 'must not contain NUL (\\u0000) characters' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) return { path: pathOf(visit), message: `is nested deeper than ${MAX_BODY_DEPTH} levels` };
    for (const key of Object.keys(value)) {
      const member: Visit = { value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: visit, key };
      if (key.includes('\u0000')) return { path: pathOf(member), message: 'must not contain NUL (\\u0000) characters' };
      stack.push(member);
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
  return sendProblem(req, res, 400, problemBody('INVALID_REQUEST', describeFieldErrors([found]), { errors: [found] }));
};
