/**
 * JSON Schema → fast-check, for what our request schemas use: objects (required, optional members,
 * additionalProperties: false), strings (min/maxLength, pattern via fc.stringMatching, enum, const,
 * formats uuid/date/date-time/email/uri/uri-reference), integers and numbers (minimum, maximum,
 * exclusive bounds), booleans, arrays (min/maxItems), oneOf/anyOf (including `oneOf: [X, null]`) and
 * type arrays with 'null'. $refs resolve inside the bundled spec.
 *
 * And the other direction: `mutations` lists the ways a valid value can be made invalid (wrong type,
 * missing required member, too long, bad enum, unknown member, out of range, ...), each with the JSON
 * path it breaks.
 *
 * Both directions go to the edges of what the database stores: dates and date-times across the whole
 * RFC 3339 grammar (years 0000/0001/9999, Feb 29, ±23:59 offsets, leap seconds, seven fractional
 * digits), kept or broken by the server's own formats (src/http/formats.ts); numbers at their bounds,
 * at 2^31, 2^53, 2^63 and the largest double; strings with an unpaired surrogate or NUL.
 */
import fc from 'fast-check';
import { isStorableDate, isStorableDateTime } from '../../../src/http/formats.js';
import { componentName, deref, type Schema } from './spec-model.js';

export type JsonPath = (string | number)[];

export interface Hint {
  arb: fc.Arbitrary<unknown>;
  only?: boolean;
}

export interface GenContext {
  /**
   * Real values (ids from fixtures) offered beside random ones at matching paths; `only` replaces the
   * random ones (for values that must not be random, such as a webhook URL the server will call).
   */
  hint?: (path: JsonPath, schema: Schema) => Hint | undefined;
  /** Rules the spec states in prose only (see FIXUPS in requests.ts), applied to a component's values. */
  fixups?: Record<string, (arb: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>>;
  /** Characters for strings: 'any' (Unicode, no U+0000) for bodies, 'header' for header values. */
  chars?: 'any' | 'header' | 'path';
}

const codePoint = (lo: number, hi: number) => fc.integer({ min: lo, max: hi }).map((c) => String.fromCodePoint(c));
/**
 * Mostly printable ASCII, some control characters, some of the rest of Unicode, astral characters as
 * surrogate pairs. U+0000 and unpaired surrogates are left out: PostgreSQL cannot store them, and the
 * platform answers 400 for them (src/http/storable-strings.ts), which the invalid cases check.
 */
const anyChar = fc.oneof(
  { weight: 12, arbitrary: codePoint(0x20, 0x7e) },
  { weight: 1, arbitrary: codePoint(0x01, 0x1f) },
  { weight: 3, arbitrary: codePoint(0x80, 0xd7ff) },
  { weight: 2, arbitrary: codePoint(0xe000, 0x10ffff) },
);
/** Header values: visible ASCII (fetch trims surrounding spaces and refuses control characters). */
const headerChar = codePoint(0x21, 0x7e);

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** RFC 3339 full-dates, edges weighted: years 0000, 0001 and 9999, leap days, days 29–31 of any month. */
export const rfc3339Date = fc
  .tuple(
    fc.oneof(fc.constantFrom(0, 1, 9999, 1900, 2000, 2024), fc.integer({ min: 1, max: 9999 })),
    fc.integer({ min: 1, max: 12 }),
    fc.oneof(fc.integer({ min: 1, max: 28 }), fc.constantFrom(29, 30, 31)),
  )
  .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
/** RFC 3339 date-times over the whole grammar: any offset up to ±23:59, second 60, 0–7 fractional digits. */
export const rfc3339DateTime = fc
  .tuple(
    rfc3339Date,
    fc.constantFrom('T', 't'),
    fc.integer({ min: 0, max: 23 }),
    fc.integer({ min: 0, max: 59 }),
    fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 59 }) }, { weight: 1, arbitrary: fc.constant(60) }),
    fc.integer({ min: 0, max: 7 }).chain((digits) => fc.integer({ min: 0, max: 10 ** digits - 1 }).map((f) => (digits ? `.${pad(f, digits)}` : ''))),
    fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom('Z', 'z', '+00:00', '-00:00') },
      { weight: 3, arbitrary: fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 30, 45, 59)).map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`) },
    ),
  )
  .map(([date, t, h, m, s, fraction, offset]) => `${date}${t}${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${fraction}${offset}`);

/**
 * Values the RFC 3339 grammar (and ajv-formats) admits but the database cannot store as sent: each a
 * `format-edge` mutation that must get 400 naming its field.
 */
const FORMAT_EDGES: Record<string, string[]> = {
  date: ['0000-01-01', '2023-02-29', '1900-02-29', '2024-04-31'],
  'date-time': [
    '0000-01-01T00:00:00Z',
    '2020-01-01T00:00:00+23:59',
    '2020-01-01T00:00:00-16:00',
    '0001-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59.999-00:01',
    '2016-12-31T23:59:60Z',
    '2020-01-01T00:00:00.1234567Z',
  ],
};

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  uuid: fc.uuid(),
  date: rfc3339Date.filter(isStorableDate),
  'date-time': rfc3339DateTime.filter(isStorableDateTime),
  email: fc.stringMatching(/^[a-z0-9]{1,16}(\.[a-z0-9]{1,8})?@[a-z0-9]{1,12}\.(com|org|dev|com\.br)$/),
  uri: fc.stringMatching(/^https:\/\/[a-z0-9]{1,12}\.example\.com(\/[a-z0-9_-]{1,12}){0,3}$/),
  'uri-reference': fc.stringMatching(/^\/[a-z0-9_-]{1,12}(\/[a-z0-9_-]{1,12}){0,2}$/),
};

/** Types a schema allows (null = any), folding `oneOf: [X, {type: null}]` into X + null. */
export function typesOf(schema: Schema): Set<string> | null {
  const s = deref(schema);
  if (s.const !== undefined) return new Set([jsonType(s.const)]);
  if (Array.isArray(s.enum)) return new Set(s.enum.map(jsonType));
  if (s.type !== undefined) return new Set(Array.isArray(s.type) ? s.type : [s.type]);
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (branches) {
    const all = new Set<string>();
    for (const b of branches) {
      const t = typesOf(b);
      if (t === null) return null;
      for (const x of t) all.add(x);
    }
    return all;
  }
  return null;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

export function arbitraryFor(schema: Schema, ctx: GenContext = {}, path: JsonPath = [], depth = 0): fc.Arbitrary<unknown> {
  const hinted = ctx.hint?.(path, schema);
  if (hinted?.only) return hinted.arb;
  const base = build(schema, ctx, path, depth);
  return hinted ? fc.oneof({ weight: 3, arbitrary: hinted.arb }, { weight: 1, arbitrary: base }) : base;
}

function build(schema: Schema, ctx: GenContext, path: JsonPath, depth: number): fc.Arbitrary<unknown> {
  const name = componentName(schema);
  if (schema.$ref) {
    const arb = build(deref(schema), ctx, path, depth);
    const fix = name ? ctx.fixups?.[name] : undefined;
    return fix ? fix(arb) : arb;
  }
  const s = schema;
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (branches) {
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    return fc.oneof(...branches.map((b) => build({ ...rest, ...deref(b) }, ctx, path, depth)));
  }
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((t) => build({ ...s, type: t }, ctx, path, depth)));
  switch (s.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(s);
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s, ctx);
    case 'array': {
      const minLength = s.minItems ?? 0;
      const maxLength = Math.max(minLength, depth > 4 ? minLength : Math.min(s.maxItems ?? 3, minLength + 3));
      const items = arbitraryFor(s.items ?? {}, ctx, [...path, 0], depth + 1);
      return s.uniqueItems === true
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object':
    case undefined: {
      if (s.type === undefined && !s.properties) return fc.constant(null);
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>((s.required as string[] | undefined) ?? []);
      // Deep down, only what is required: keeps bodies small and recursion finite.
      const keys = Object.keys(props).filter((k) => required.has(k) || depth < 5);
      const model = Object.fromEntries(keys.map((k) => [k, arbitraryFor(props[k]!, ctx, [...path, k], depth + 1)]));
      return fc.record(model, { requiredKeys: keys.filter((k) => required.has(k)) });
    }
    default:
      throw new Error(`schema type ${String(s.type)} is not supported by the generator (at ${path.join('/')})`);
  }
}

/** Integers in [lo, hi] (fc.integer is 32-bit; wider ranges go through bigint). */
function intBetween(lo: number, hi: number): fc.Arbitrary<number> {
  if (lo >= -(2 ** 31) && hi <= 2 ** 31 - 1) return fc.integer({ min: lo, max: hi });
  return fc.bigInt({ min: BigInt(lo), max: BigInt(hi) }).map(Number);
}

function integerArb(s: Schema): fc.Arbitrary<number> {
  const min = typeof s.exclusiveMinimum === 'number' ? Math.floor(s.exclusiveMinimum) + 1 : typeof s.minimum === 'number' ? Math.ceil(s.minimum) : -(2 ** 31);
  const max = typeof s.exclusiveMaximum === 'number' ? Math.ceil(s.exclusiveMaximum) - 1 : typeof s.maximum === 'number' ? Math.floor(s.maximum) : 2 ** 31 - 1;
  const lo = Math.max(min, Number.MIN_SAFE_INTEGER);
  const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
  // Mostly small values near zero (or near the lower bound), plus both bounds and anything between.
  const center = Math.min(Math.max(0, lo), hi);
  return fc.oneof(
    { weight: 3, arbitrary: intBetween(Math.max(lo, center - 100), Math.min(hi, center + 1000)) },
    { weight: 1, arbitrary: fc.constantFrom(lo, hi, ...NUMERIC_LIMITS.filter((n) => Number.isInteger(n) && n >= min && n <= max)) },
    { weight: 1, arbitrary: intBetween(lo, hi) },
  );
}

/** Where integer and numeric columns and doubles end: int4, int8, the safe integers, the largest double. */
const NUMERIC_LIMITS = [2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 63, -(2 ** 63), 1e300, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 0.1 + 0.2];

function numberArb(s: Schema): fc.Arbitrary<number> {
  const min = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : typeof s.minimum === 'number' ? s.minimum : undefined;
  const max = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : typeof s.maximum === 'number' ? s.maximum : undefined;
  const double = fc.double({
    min,
    max,
    minExcluded: typeof s.exclusiveMinimum === 'number',
    maxExcluded: typeof s.exclusiveMaximum === 'number',
    noNaN: true,
    noDefaultInfinity: true,
  });
  // Amounts people send (whole numbers and cents) as well as the extremes a double can hold.
  const lo = min === undefined ? -1e6 : min;
  const hi = max === undefined ? lo + 1e6 : Math.min(max, lo + 1e6);
  const cents = intBetween(Math.ceil(lo * 100), Math.floor(hi * 100)).map((c) => c / 100);
  const limits = [lo, ...(max === undefined ? [] : [max]), ...NUMERIC_LIMITS];
  return fc.oneof({ weight: 4, arbitrary: cents }, { weight: 2, arbitrary: double }, { weight: 1, arbitrary: fc.constantFrom(...limits) }).filter((n) => {
    if (min !== undefined && (typeof s.exclusiveMinimum === 'number' ? n <= min : n < min)) return false;
    if (max !== undefined && (typeof s.exclusiveMaximum === 'number' ? n >= max : n > max)) return false;
    return !Object.is(n, -0);
  });
}

function stringArb(s: Schema, ctx: GenContext): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? minLength + 64;
  const fits = (v: string) => [...v].length >= minLength && [...v].length <= maxLength;
  if (typeof s.format === 'string' && FORMATS[s.format]) {
    const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
    return FORMATS[s.format]!.filter((v) => fits(v) && (!pattern || pattern.test(v)));
  }
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern, 'u')).filter(fits);
  const unit = ctx.chars === 'header' ? headerChar : ctx.chars === 'path' ? anyChar.filter((c) => c !== '.') : anyChar;
  const capped = Math.min(maxLength, minLength + 40);
  const arbs: fc.Arbitrary<string>[] = [fc.string({ unit, minLength, maxLength: capped })];
  // The longest allowed value, where that stays a reasonable request.
  if (maxLength > capped && maxLength <= 4096) arbs.push(fc.string({ unit, minLength: maxLength, maxLength }));
  return arbs.length === 1 ? arbs[0]! : fc.oneof({ weight: 4, arbitrary: arbs[0]! }, { weight: 1, arbitrary: arbs[1]! });
}

// ---------------------------------------------------------------------------------------------
// Making a valid value invalid

export type MutationKind =
  | 'wrong-type'
  | 'missing-required'
  | 'too-long'
  | 'too-short'
  | 'bad-enum'
  | 'bad-format'
  | 'extra-field'
  | 'out-of-range'
  | 'too-many-items'
  | 'too-few-items'
  | 'format-edge'
  | 'unstorable-string';

export interface Mutation {
  kind: MutationKind;
  /** The JSON path the mutation breaks (where the server's `errors[].path` should point). */
  path: JsonPath;
  apply(root: unknown): unknown;
}

/** The schema that describes `value` at this node: $refs resolved, the matching oneOf/anyOf branch. */
function resolveFor(schema: Schema, value: unknown): Schema | undefined {
  let s = deref(schema);
  for (let i = 0; i < 8; i++) {
    const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
    if (!branches) return s;
    const t = jsonType(value);
    const match = branches.map((b) => deref(b)).find((b) => {
      const types = typesOf(b);
      return types === null || types.has(t) || (t === 'integer' && types.has('number'));
    });
    if (!match) return undefined;
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    s = { ...rest, ...match };
  }
  return s;
}

function setAt(root: unknown, path: JsonPath, update: (v: unknown) => unknown): unknown {
  if (path.length === 0) return update(root);
  const [head, ...rest] = path;
  const copy = (Array.isArray(root) ? [...root] : { ...(root as Record<string, unknown>) }) as Record<string | number, unknown>;
  copy[head!] = setAt(copy[head!], rest, update);
  return copy;
}

const WRONG_VALUES: unknown[] = [12345, 1.5, 'a-string', true, { unexpected: 1 }, ['x'], null];

/** `s` with `char` in its middle (between code points, so a surrogate pair stays whole). */
const withChar = (s: string, char: string) => {
  let at = Math.floor(s.length / 2);
  if (/[\ud800-\udbff]/.test(s[at - 1] ?? '')) at -= 1;
  return s.slice(0, at) + char + s.slice(at);
};

/**
 * Every way to break `value` (valid for `schema`), deepest first is not implied: all of them.
 * `unstorable` is the character a string gets for an `unstorable-string` mutation: an unpaired
 * surrogate in a body; NUL where the value travels percent-encoded (encodeURIComponent refuses surrogates).
 */
export function mutations(schema: Schema, value: unknown, path: JsonPath = [], unstorable = '\ud800'): Mutation[] {
  const s = resolveFor(schema, value);
  if (!s) return [];
  const out: Mutation[] = [];
  const types = typesOf(s);
  if (types) {
    const accepts = (v: unknown) => {
      const t = jsonType(v);
      return types.has(t) || (t === 'integer' && types.has('number'));
    };
    const wrong = WRONG_VALUES.find((v) => !accepts(v) && jsonType(v) !== jsonType(value));
    if (wrong !== undefined) out.push({ kind: 'wrong-type', path, apply: (root) => setAt(root, path, () => wrong) });
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    out.push({ kind: 'unstorable-string', path, apply: (root) => setAt(root, path, (v) => withChar(String(v), unstorable)) });
    for (const edge of typeof s.format === 'string' ? (FORMAT_EDGES[s.format] ?? []) : []) {
      out.push({ kind: 'format-edge', path, apply: (root) => setAt(root, path, () => edge) });
    }
    if (Array.isArray(s.enum)) {
      out.push({ kind: 'bad-enum', path, apply: (root) => setAt(root, path, () => `NOT_${String(s.enum[0])}_X`) });
    } else {
      if (typeof s.maxLength === 'number' && s.maxLength < 2_000_000) {
        out.push({ kind: 'too-long', path, apply: (root) => setAt(root, path, () => 'x'.repeat(s.maxLength + 1)) });
      }
      if (typeof s.minLength === 'number' && s.minLength > 1 && len >= s.minLength) {
        out.push({ kind: 'too-short', path, apply: (root) => setAt(root, path, () => 'x'.repeat(s.minLength - 1)) });
      }
      const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
      const bad = ['%% not valid %%', 'a/b\\c\u0001'].find((c) => (pattern ? !pattern.test(c) : typeof s.format === 'string' && s.format in FORMATS));
      if (bad !== undefined) out.push({ kind: 'bad-format', path, apply: (root) => setAt(root, path, () => bad) });
    }
  }
  if (typeof value === 'number') {
    const max = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : typeof s.maximum === 'number' ? s.maximum + 1 : undefined;
    const min = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : typeof s.minimum === 'number' ? s.minimum - 1 : undefined;
    if (max !== undefined) out.push({ kind: 'out-of-range', path, apply: (root) => setAt(root, path, () => max) });
    if (min !== undefined) out.push({ kind: 'out-of-range', path, apply: (root) => setAt(root, path, () => min) });
  }
  if (Array.isArray(value)) {
    if (typeof s.maxItems === 'number' && value.length > 0 && s.maxItems < 1000) {
      out.push({ kind: 'too-many-items', path, apply: (root) => setAt(root, path, (v) => Array.from({ length: s.maxItems + 1 }, (_, i) => (v as unknown[])[i % (v as unknown[]).length])) });
    }
    if (typeof s.minItems === 'number' && s.minItems > 0) {
      out.push({ kind: 'too-few-items', path, apply: (root) => setAt(root, path, (v) => (v as unknown[]).slice(0, s.minItems - 1)) });
    }
    value.forEach((item, i) => out.push(...mutations(s.items ?? {}, item, [...path, i], unstorable)));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const name of (s.required as string[] | undefined) ?? []) {
      if (name in obj) {
        out.push({
          kind: 'missing-required',
          path: [...path, name],
          apply: (root) => setAt(root, path, (v) => Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => k !== name))),
        });
      }
    }
    if (s.additionalProperties === false) {
      out.push({ kind: 'extra-field', path: [...path, 'unexpected_member'], apply: (root) => setAt(root, path, (v) => ({ ...(v as object), unexpected_member: 'x' })) });
    }
    const member = withChar('member', unstorable);
    out.push({ kind: 'unstorable-string', path: [...path, member], apply: (root) => setAt(root, path, (v) => ({ ...(v as object), [member]: 'x' })) });
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const [name, member] of Object.entries(obj)) {
      if (props[name]) out.push(...mutations(props[name], member, [...path, name], unstorable));
    }
  }
  return out;
}

/** '/body/a/0/b' */
export const pointerOf = (prefix: string, path: JsonPath): string => [prefix, ...path.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1'))].join('/');
