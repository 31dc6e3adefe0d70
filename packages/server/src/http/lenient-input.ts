/**
 * The tolerances of Yuno's published examples (docs/guides/yuno-compatibility.md), applied in one place:
 * right after validation, before any handler or service sees the body. The spec states each one on the
 * schema it concerns, so the validator, the generated types and this step agree:
 *
 * - `x-lenient: number`: an amount sent as a string of digits (`"20000"`; the spec's own `oneOf` admits
 *   only digits) becomes that number.
 * - `x-lenient: null-as-absent`: an optional member sent as `null` is dropped, as if it had not been sent.
 * - `x-lenient: two-digit-year`: a card's four-digit expiry year (2000–2099) becomes its last two digits.
 * - `x-lenient: https-url`: a URL written without a scheme (`www.example.com`, `shop.example.com:8443/r`; the
 *   spec's own `anyOf` admits a host name and a path then) becomes `https://` and that text.
 *
 * Anything else (unknown members, wrong types, values out of range) was refused by the validator before
 * this step; this only rewrites values the spec already accepted. The idempotency fingerprint is taken
 * after it, so `"20000"` and `20000` are the same request.
 */
import type { RequestHandler } from 'express';
import type { OpenApiDocument, OperationInfo } from './spec.js';

type Lenience = 'number' | 'null-as-absent' | 'two-digit-year' | 'https-url';

type Schema = {
  $ref?: string;
  'x-lenient'?: Lenience;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
};

/** Deeper than any request schema nests (rejectUnstorableStrings bounds the body's depth as well). */
const MAX_DEPTH = 40;

function resolve(spec: OpenApiDocument, node: Schema): Schema {
  let at = node;
  for (let hops = 0; at.$ref !== undefined && hops < 32; hops++) {
    at = at.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k.replaceAll('~1', '/').replaceAll('~0', '~')], spec) as Schema;
  }
  return at;
}

/** Whether a schema (or, through its alternatives, any part of it) says something lenient. */
function mentionsLenience(spec: OpenApiDocument, schema: Schema, depth: number, seen: Set<Schema>): boolean {
  const s = resolve(spec, schema);
  if (seen.has(s) || depth > MAX_DEPTH) return false;
  seen.add(s);
  if (s['x-lenient'] !== undefined) return true;
  const subs = [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? []), ...(s.items ? [s.items] : []), ...Object.values(s.properties ?? {})];
  return subs.some((sub) => mentionsLenience(spec, sub, depth + 1, seen));
}

/**
 * A URL written without a scheme: no scheme's colon before any dot or slash (the spec's host-and-path
 * alternative), or a host name with a port (`shop.example.com:8443/r`, which `format: uri` reads as a URL of
 * scheme "shop.example.com": no scheme has a dot followed by a port number).
 */
function schemeless(value: string): boolean {
  return !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) || /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+:[0-9]{1,5}(?:[/?]|$)/.test(value);
}

function applyTo(value: unknown, lenience: Lenience | undefined): unknown {
  if (lenience === 'number' && typeof value === 'string' && /^[0-9]+$/.test(value)) return Number(value);
  if (lenience === 'two-digit-year' && typeof value === 'number' && value >= 2000 && value <= 2099) return value - 2000;
  if (lenience === 'https-url' && typeof value === 'string' && schemeless(value)) return `https://${value}`;
  return value;
}

/** Rewrites `value` (already valid under `schema`) in place where the schema is lenient; returns the new value. */
function normalize(spec: OpenApiDocument, schema: Schema, value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return value;
  const s = resolve(spec, schema);
  const next = applyTo(value, s['x-lenient']);
  if (next === null || typeof next !== 'object') return next;
  // An object or array: look inside along every alternative that describes it (a valid body matches one;
  // the others name no member or item it has, or the same rule).
  const alternatives = [s, ...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])].map((a) => resolve(spec, a));
  if (Array.isArray(next)) {
    for (const alt of alternatives) {
      if (!alt.items) continue;
      for (let i = 0; i < next.length; i++) next[i] = normalize(spec, alt.items, next[i], depth + 1);
    }
    return next;
  }
  const object = next as Record<string, unknown>;
  for (const alt of alternatives) {
    for (const [name, member] of Object.entries(alt.properties ?? {})) {
      if (!Object.hasOwn(object, name)) continue;
      const m = resolve(spec, member);
      if (object[name] === null && m['x-lenient'] === 'null-as-absent') {
        delete object[name];
        continue;
      }
      object[name] = normalize(spec, member, object[name], depth + 1);
    }
  }
  return object;
}

/** The JSON request body schema of each operation whose body has a lenient place. */
function lenientBodies(spec: OpenApiDocument, ops: readonly OperationInfo[]): Map<string, Schema> {
  const bodies = new Map<string, Schema>();
  for (const op of ops) {
    const raw = (spec.paths[op.template]?.[op.method] as { requestBody?: Schema & { content?: Record<string, { schema?: Schema }> } } | undefined)?.requestBody;
    const schema = raw ? (resolve(spec, raw) as { content?: Record<string, { schema?: Schema }> }).content?.['application/json']?.schema : undefined;
    if (schema && mentionsLenience(spec, schema, 0, new Set())) bodies.set(op.operationId, schema);
  }
  return bodies;
}

/** After validation, before dispatch: the body as the handlers are typed to receive it. */
export function lenientInput(spec: OpenApiDocument, ops: readonly OperationInfo[]): RequestHandler {
  const bodies = lenientBodies(spec, ops);
  return (req, res, next) => {
    const schema = bodies.get((res.locals.operation as OperationInfo | undefined)?.operationId ?? '');
    if (schema && req.body !== undefined) req.body = normalize(spec, schema, req.body, 0);
    next();
  };
}

/**
 * A body's type as lenientInput leaves it, for the places the generated type is wider than what the
 * handlers get: a `number | string` (only ever an `x-lenient: number` amount) is a number.
 */
export type Lenient<T> = [Exclude<T, undefined | null>] extends [number | string]
  ? LenientScalar<Exclude<T, undefined | null>> | Extract<T, undefined | null>
  : T extends readonly (infer U)[]
    ? Lenient<U>[]
    : T extends object
      ? { [K in keyof T]: Lenient<T[K]> }
      : T;
type LenientScalar<T> = [number] extends [T] ? ([string] extends [T] ? number : T) : T;

/** An object whose `x-lenient: null-as-absent` members never hold `null` once lenientInput ran. */
export type NullAsAbsent<T> = { [K in keyof T]: Exclude<T[K], null> };
