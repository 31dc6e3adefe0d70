/**
 * What a field must hold, said the way a developer fixes their request: the validator's pattern, format,
 * length and range errors ("must NOT have fewer than 36 characters", "must be <= 99", "must match pattern
 * "^[A-Z]{3}$"") become "must be a UUID, for example …", "must be an integer from 0 to 99 — Expiration
 * year as TWO digits (29 for 2029)", "must be 3 capital letters". One mapping for every field, phrased
 * from the field's schema in the spec (its format, pattern, bounds, description, or the parameter's
 * example), so a schema change changes the message with it. Other errors (type, enum, required, unknown
 * member, item and member counts) keep the validator's wording, which already says what to send.
 */
import type { OpenApiDocument } from './spec.js';

type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { $ref?: string; name?: string; in?: string; schema?: Schema; example?: unknown; description?: string };
type Operation = { parameters?: Parameter[]; requestBody?: { $ref?: string; content?: Record<string, { schema?: Schema }> } };

/** Every `format` the spec uses (src/http/formats.ts checks date and date-time as the database stores them). */
export const FORMAT_PHRASES: Record<string, string> = {
  uuid: 'a UUID (8-4-4-4-12 hexadecimal digits, for example 3f9c1b2a-7d4e-4a8b-9c6d-1e2f3a4b5c6d)',
  date: 'a date as YYYY-MM-DD, from 0001-01-01 to 9999-12-31',
  'date-time': 'an RFC 3339 date-time such as 2026-11-26T10:20:30.123456Z (an offset within ±15:59, at most microseconds)',
  email: 'an email address such as name@example.com',
  uri: 'an absolute URI such as https://shop.example.com/path',
  'uri-reference': 'a URI or a relative reference such as /path',
};

/** Patterns whose meaning a generic reading would miss (the rest: see describePattern). */
export const PATTERN_PHRASES: Record<string, string> = {
  '^[A-Z]{3}$': 'an ISO 4217 currency code: 3 capital letters such as USD',
  '^[A-Z]{2}$': 'an ISO 3166-1 alpha-2 country code: 2 capital letters such as BR',
  '^[\\x20-\\x7E]+$': 'printable ASCII characters only (no control or non-ASCII characters)',
  '^[A-Z][A-Z0-9_]*$': 'capital letters, digits and `_`, starting with a letter (like SOME_CODE)',
  '^whsec_[A-Za-z0-9+/]+=*$': 'a signing secret: `whsec_` followed by base64',
  '^whsec_[A-Za-z0-9+/=]{16,249}$': 'a signing secret: `whsec_` followed by 16 to 249 base64 characters',
  '^[Hh][Tt][Tt][Pp][Ss]?://': 'an http:// or https:// URL',
  '^P': 'an ISO 8601 duration starting with P, such as P7D or PT12H',
  '^[0-9]*[1-9][0-9]*$': 'a whole amount written as digits, above zero, such as "20000" (or a JSON number)',
  '^[^/\\\\\\x00-\\x1F\\x7F-\\x9F]+$': 'a file name without `/`, `\\` or control characters',
  '^(sk|rk)_(test|live)_[A-Za-z0-9]{16,247}$': 'a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)',
  '^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$': '1 to 80 letters, digits, `_`, `.` or `-`, starting with a letter or digit',
  '^([0-9A-Fa-f]{2}){16,64}$': '32 to 128 hexadecimal digits (an even number of them)',
  '^[A-Za-z0-9][A-Za-z0-9-]{0,99}$': '1 to 100 letters, digits or `-`, starting with a letter or digit',
  '^(TEST|APP_USR)-[A-Za-z0-9-]{16,240}$': 'a Mercado Pago access token (TEST-… or APP_USR-…)',
  '^[0-9]{1,11}(\\.[0-9]{1,4})?$': 'a decimal amount written as digits, up to 11 before the point and 4 after, such as "49.90"',
  '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$': 'an origin: http:// or https://, a host and an optional port, with no path (like https://shop.example)',
  '^sk_sandbox_[A-Za-z0-9_]{8,120}$': 'a sandbox secret key: sk_sandbox_ followed by 8 to 120 letters, digits or `_`',
  '^[\\x21-\\x7E]+$': 'printable ASCII characters without spaces (it is sent as a header value)',
  "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+(?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$":
    'a URL with https:// or http://, or a host name with dots and an optional path, such as www.example.com/return (read as https://)',
};

const CLASS_PARTS: [string, string][] = [
  ['A-Za-z', 'letters'],
  ['0-9', 'digits'],
  ['A-Z', 'capital letters'],
  ['a-z', 'lowercase letters'],
];

/**
 * A phrase for the simple patterns, one character class and a count (`^[0-9]{4,20}$` → "4 to 20
 * digits", `^[a-z0-9_-]{1,32}$` → "1 to 32 lowercase letters, digits, `_` or `-`"), else undefined.
 */
export function describePattern(pattern: string): string | undefined {
  if (PATTERN_PHRASES[pattern]) return PATTERN_PHRASES[pattern];
  const m = /^\^\[([^\]^\\]+)\](?:\{(\d+)(?:,(\d+))?\}|(\+))\$$/.exec(pattern);
  if (!m) return undefined;
  let chars = m[1]!;
  const found: { at: number; name: string }[] = [];
  for (const [part, name] of CLASS_PARTS) {
    const at = chars.indexOf(part);
    if (at >= 0) {
      found.push({ at: m[1]!.indexOf(part), name });
      chars = chars.replace(part, ' '.repeat(part.length));
    }
  }
  chars = chars.replaceAll(' ', '');
  if (/[A-Za-z0-9]-[A-Za-z0-9]/.test(chars)) return undefined; // another range: not a simple class
  // In the order the class writes them, then its single characters.
  const names = [...found.sort((a, b) => a.at - b.at).map((f) => f.name), ...[...chars].map((c) => `\`${c}\``)];
  const what = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  if (m[4]) return `one or more ${what}`;
  const [min, max] = [Number(m[2]), m[3] === undefined ? Number(m[2]) : Number(m[3])];
  return `${min === max ? `${min}` : `${min} to ${max}`} ${what}`;
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEYWORD = /^(\w+)\.openapi\.validation$/;
const firstSentence = (text: string | undefined) => text?.split(/(?<=\.)\s/)[0]?.replace(/\.$/, '').trim().slice(0, 160);

export interface FieldMessages {
  /** The message for one validator error at `pointer` (/body/…, /params/…, /query/…, /headers/…) of the operation. */
  (operation: { method: string; template: string } | undefined, pointer: string, message: string, errorCode: string | undefined): string;
}

export function createFieldMessages(spec: OpenApiDocument): FieldMessages {
  const doc = spec as unknown as { components?: Record<string, Record<string, unknown>>; paths: Record<string, Record<string, unknown>> };
  const deref = <T extends { $ref?: string }>(node: T | undefined): T | undefined => {
    for (let i = 0; i < 16 && typeof node?.$ref === 'string'; i++) {
      const [, , kind, name] = node.$ref.split('/');
      node = doc.components?.[kind!]?.[name!] as T | undefined;
    }
    return node;
  };
  /** The schema and its alternatives (a nullable `oneOf`, an `allOf` wrapper), $refs resolved. */
  const branches = (schema: Schema | undefined, depth = 0): Schema[] => {
    const s = deref(schema);
    if (!s || depth > 4) return [];
    return [s, ...[...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])].flatMap((b) => branches(b, depth + 1))];
  };
  /** What the spec says of the field at the pointer: its schema's alternatives, and a parameter's example. */
  const fieldAt = (operation: { method: string; template: string } | undefined, pointer: string): { schemas: Schema[]; example?: unknown } => {
    if (!operation) return { schemas: [] };
    const item = doc.paths[operation.template] as (Record<string, Operation> & { parameters?: Parameter[] }) | undefined;
    const op = item?.[operation.method.toLowerCase()];
    if (!op) return { schemas: [] };
    const [, place, ...rest] = pointer.split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    let schemas: Schema[];
    let example: unknown;
    if (place === 'body') {
      schemas = branches(deref(op.requestBody)?.content?.['application/json']?.schema);
    } else {
      const where = place === 'params' ? 'path' : place === 'headers' ? 'header' : place;
      const name = rest.shift()?.toLowerCase();
      const param = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(p)).find((p) => p?.in === where && p?.name?.toLowerCase() === name);
      schemas = branches(param?.schema);
      example = param?.example;
    }
    for (const seg of rest) {
      schemas = schemas.flatMap((s) => (s.properties?.[seg] ? branches(s.properties[seg]) : /^\d+$/.test(seg) && s.items ? branches(s.items) : []));
      example = undefined;
    }
    return { schemas, example };
  };

  const range = (s: Schema): string => {
    const noun = (Array.isArray(s.type) ? s.type : [s.type]).includes('integer') ? 'an integer' : 'a number';
    const low = s.minimum !== undefined ? { n: s.minimum, strict: false } : s.exclusiveMinimum !== undefined ? { n: s.exclusiveMinimum, strict: true } : undefined;
    const high = s.maximum !== undefined ? { n: s.maximum, strict: false } : s.exclusiveMaximum !== undefined ? { n: s.exclusiveMaximum, strict: true } : undefined;
    if (low && high && !low.strict && !high.strict) return `${noun} from ${low.n} to ${high.n}`;
    const parts = [low && (low.strict ? `greater than ${low.n}` : `at least ${low.n}`), high && (high.strict ? `less than ${high.n}` : `at most ${high.n}`)].filter(Boolean);
    return `${noun} ${parts.join(' and ')}`;
  };
  const length = (s: Schema): string =>
    s.minLength !== undefined && s.maxLength !== undefined
      ? s.minLength === s.maxLength
        ? `exactly ${s.minLength} characters long`
        : `${s.minLength} to ${s.maxLength} characters long`
      : s.minLength !== undefined
        ? `at least ${s.minLength} characters long`
        : `at most ${s.maxLength} characters long`;
  const withHint = (phrase: string, s: Schema | undefined) => {
    const hint = firstSentence(s?.description);
    return hint ? `must be ${phrase} — ${hint}` : `must be ${phrase}`;
  };

  return (operation, pointer, message, errorCode) => {
    const keyword = KEYWORD.exec(errorCode ?? '')?.[1];
    // The validator names the format or pattern in the message; the phrase for it is the spec's meaning.
    const named = /^must match (format|pattern) "(.*)"$/s.exec(message);
    if (named) {
      const phrase = named[1] === 'format' ? FORMAT_PHRASES[named[2]!] : describePattern(named[2]!);
      return phrase ? `must be ${phrase}` : message;
    }
    if (!keyword || !['minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].includes(keyword)) return message;
    const field = fieldAt(operation, pointer);
    const bounded = field.schemas.find((s) => s[keyword as keyof Schema] !== undefined);
    if (keyword === 'minLength' || keyword === 'maxLength') {
      // A string with a format or pattern: what it must look like says more than its length.
      const shaped = field.schemas.find((s) => (s.format && FORMAT_PHRASES[s.format]) || (s.pattern && describePattern(s.pattern)));
      if (shaped) return `must be ${shaped.format ? FORMAT_PHRASES[shaped.format] : describePattern(shaped.pattern!)}`;
      // An id parameter (36 to 64 characters): its example shows what the API returns.
      if (typeof field.example === 'string' && UUID_SHAPE.test(field.example)) return `must be a UUID as this API returned it, for example ${field.example}`;
      if (!bounded) return message;
      return withHint(length(bounded), bounded);
    }
    if (!bounded) return message;
    return withHint(range(bounded), bounded);
  };
}
