import type { RequestHandler } from 'express';
import { describeFieldErrors, problemBody, type FieldError } from './problems.js';
import { sendProblem } from './send.js';
import { pathParamsOf, type OperationInfo } from './spec.js';

/** Deeper than any body the spec describes (ours nest under 10 levels); deeper input is hostile. */
export const MAX_BODY_DEPTH = 32;

/** `path` + one JSON Pointer segment (RFC 6901 escaping). */
export const pointer = (path: string, key: string) => `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;

type Visit = { value: unknown; depth: number; parent?: Visit; key?: string };

/** The JSON Pointer of a visited place, built only for a finding (building one per value cost more than the walk). */
function pathOf(root: string, visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reduceRight((path, key) => pointer(path, key), root);
}

// String.prototype.isWellFormed (ES2024, Node 20): false when a UTF-16 surrogate has no pair.
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * Why PostgreSQL cannot store this text, or undefined: U+0000 (text cannot hold it) and an unpaired
 * surrogate (`"\ud800"` in JSON: no UTF-8 encoding exists; json/jsonb refuse it, and a text parameter
 * would be silently stored as U+FFFD).
 */
export function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (!wellFormed(s)) return 'must not contain unpaired UTF-16 surrogates (\\ud800–\\udfff without their pair)';
  return undefined;
}

/**
 * Walks a parsed value without recursion (a hostile body cannot blow the stack) and returns the first
 * string or member name the database cannot store, or the first place nested deeper than MAX_BODY_DEPTH.
 */
export function findUnstorable(value: unknown, root: string): FieldError | undefined {
  const stack: Visit[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (typeof value === 'string') {
      const message = unstorable(value);
      if (message) return { path: pathOf(root, visit), message };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) return { path: pathOf(root, visit), message: `is nested deeper than ${MAX_BODY_DEPTH} levels` };
    for (const key of Object.keys(value)) {
      const member: Visit = { value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: visit, key };
      const message = unstorable(key);
      if (message) return { path: pathOf(root, member), message };
      stack.push(member);
    }
  }
  return undefined;
}

/**
 * Rejects, before validation and handlers run, every string the database cannot store — in the body
 * (values and member names), the path parameters and the query — and absurd nesting (found by the
 * hostile-input tests). Header values need no check: Node's parser refuses NUL there and reads the
 * rest as Latin-1, which has no surrogates. Each is a client mistake: 400 naming the place.
 */
export const rejectUnstorableStrings: RequestHandler = (req, res, next) => {
  const params = pathParamsOf(res.locals.operation as OperationInfo, req.path);
  const malformed = Object.keys(params).find((name) => params[name] === undefined);
  const found = malformed
    ? { path: pointer('/params', malformed), message: 'is not valid percent-encoded UTF-8' }
    : (findUnstorable(params, '/params') ?? findUnstorable(req.query, '/query') ?? findUnstorable(req.body, '/body'));
  if (!found) return next();
  return sendProblem(req, res, 400, problemBody('INVALID_REQUEST', describeFieldErrors([found]), { errors: [found] }));
};
