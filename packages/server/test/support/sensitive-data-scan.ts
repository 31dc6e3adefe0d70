/**
 * After a test server stops: nothing sensitive may be left in its logs or its database.
 *
 *   - PANs in any log line or any cell of any table of the current schema;
 *   - security codes (a `security_code` / `cvv` / `cvc` … key with a value) in the same places;
 *   - secrets: the values given (API secret keys, the admin key, vault keys, webhook signing secrets,
 *     the provider's notification secret) anywhere, in clear or (in bytea) as their raw bytes; anything
 *     shaped like a private secret key or a signing secret (`whsec_…`) in any table; any `whsec_` in a log line.
 *
 * The PAN rule, chosen to catch every card number while not flagging the ids, timestamps and hashes a
 * server writes all the time:
 *   1. 13–19 digits, contiguous or written in card groups with one kind of separator (space or dash):
 *      4-4-4-4(-1..3) / 4-4-4-1..4 and the Amex/Diners 4-6-5 / 4-6-4;
 *   2. not part of a longer alphanumeric token (a digit run inside a hex id, a hash or a base64 string
 *      is not a card number), and not either side of a decimal point (floats);
 *   3. Luhn-valid;
 *   4. a card-brand prefix: 2200–2204 (Mir), 2221–2720 (Mastercard 2-series), 30/34–39 (Diners, Amex,
 *      JCB), 4 (Visa, Elo), 5 (Mastercard, Maestro), 6 (Discover, UnionPay, Maestro, Elo, Hipercard,
 *      RuPay). This drops epoch milliseconds/microseconds (they start with 1 until 2033) and compact
 *      dates (20xx…), which pass Luhn one time in ten.
 * UUIDs have no 13-digit group, ISO timestamps no 13-digit run, and masked PANs (450799******0002,
 * ****1111) have none either.
 *
 * Personal data, as the spec declares it (`x-personal-data: true`, src/platform/personal-data.ts — the
 * same declaration the server's deletion and log redaction read, so a field added to the spec is looked
 * for here without a list to update):
 *   - in a log line, a member named like a personal field with a value (not null, empty or `[redacted]`),
 *     at any depth;
 *   - in the customers table, a deleted customer that still has a personal field of `Customer`.
 */
import type { Queryable } from '../../src/db/database.js';
import { PERSONAL_DATA, type PersonalData } from '../../src/platform/personal-data.js';

export interface Secret {
  /** What it is, for the report (never the value). */
  name: string;
  value: string;
}

export interface Finding {
  kind: 'pan' | 'security_code' | 'secret' | 'personal';
  /** `table payments.payment_method (id=…)` or `log line 12`. */
  where: string;
  /** Context with the finding masked: never a full PAN, code or secret. */
  excerpt: string;
}

export interface ScanInput {
  /** The database to read every table of (current_schema()); omit when it is closed. */
  db?: Queryable;
  logs?: readonly string[];
  secrets?: readonly Secret[];
  /** Which fields are personal: the served spec's declaration unless a test gives another. */
  personal?: PersonalData;
}

const PAN_CANDIDATE =
  /(?<![A-Za-z0-9]|\d\.)(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}(?:\1\d{1,4}){1,2}|\d{4}([ -])\d{6}\2\d{4,5})(?![A-Za-z0-9]|\.\d)/g;
const CODE_KEY = /^(?:security_code|cvv2?|cvc2?|card_verification(?:_value|_code)?)$/i;
// The same keys in text that is not (or not wholly) JSON: `"cvv":"123"`, `\"cvv\": 123`, `?cvv=123`.
const CODE_IN_TEXT = /(?<![A-Za-z0-9_])(security_code|cvv2?|cvc2?|card_verification(?:_value|_code)?)\\*"?\s*[:=]\s*\\*"?([^"\\,}&\s]*)/gi;
// src/tenancy/credentials.ts: `sk_` + base64url of 32 bytes.
const PRIVATE_KEY_SHAPE = /(?<![A-Za-z0-9_-])sk_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
// src/webhooks/secrets.ts and the sandbox provider: `whsec_` + base64 of 32 bytes. In a log line, any
// whsec_ value at all; in a table, anything of that shape (every signing secret is stored sealed).
const WHSEC_IN_LOG = /whsec_[A-Za-z0-9+/]/g;
const WHSEC_SHAPE = /whsec_[A-Za-z0-9+/]{20,}/g;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function hasCardPrefix(d: string): boolean {
  const p4 = Number(d.slice(0, 4));
  if (d[0] === '2') return (p4 >= 2200 && p4 <= 2204) || (p4 >= 2221 && p4 <= 2720);
  if (d[0] === '3') return /^3[04-9]/.test(d);
  return d[0] === '4' || d[0] === '5' || d[0] === '6';
}

/** The PANs in a text (as written, separators included), by the rule above. */
export function findPans(text: string): { match: string; index: number }[] {
  const out: { match: string; index: number }[] = [];
  for (const m of text.matchAll(PAN_CANDIDATE)) {
    const digits = m[0].replace(/[ -]/g, '');
    if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits) && hasCardPrefix(digits)) out.push({ match: m[0], index: m.index });
  }
  return out;
}

export function maskPan(pan: string): string {
  const d = pan.replace(/[ -]/g, '');
  return `${d.slice(0, 6)}${'*'.repeat(d.length - 10)}${d.slice(-4)}`;
}

const codeLabel = (key: string, value: string) => `${key} with a ${value.length}-character value`;
const hasDigit = (v: unknown) => (typeof v === 'number' ? true : typeof v === 'string' && /\d/.test(v));

/**
 * For what a provider receives (a test double's request log): the payer's name, email or document go to
 * the provider by design, so only card data and secrets are looked for there.
 */
export const NO_PERSONAL_DATA: PersonalData = { names: [], fieldsOf: () => [] };

export async function scanForSensitiveData({ db, logs = [], secrets = [], personal = PERSONAL_DATA }: ScanInput): Promise<Finding[]> {
  const known = secrets.filter((s) => s.value.length >= 8);
  const personalNames = new Set(personal.names);
  const findings = new Map<string, Finding>();

  /** The text around [start, end) with the hit replaced by `label`, every long digit run and every secret masked. */
  const excerpt = (text: string, start: number, end: number, label: string) => {
    const clean = (s: string) => {
      let out = s.replace(/\d(?:[ -]?\d){6,}/g, (run) => run.replace(/\d/g, '•'));
      for (const s2 of known) out = out.split(s2.value).join(`<${s2.name}>`).split(s2.value.replace(/^(?:whsec_|sk_)/, '')).join(`<${s2.name}>`);
      return out.replace(PRIVATE_KEY_SHAPE, 'sk_…').replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_…');
    };
    const before = text.slice(Math.max(0, start - 60), start);
    const after = text.slice(end, end + 60);
    return `${start > 60 ? '…' : ''}${clean(before)}[${label}]${clean(after)}${end + 60 < text.length ? '…' : ''}`.replace(/\s+/g, ' ');
  };
  const add = (kind: Finding['kind'], where: string, text: string, start: number, end: number, label: string) => {
    const f = { kind, where, excerpt: excerpt(text, start, end, label) };
    // The first sighting has the widest context (the whole line or cell before its inner strings).
    const key = `${kind}|${where}|${label}`;
    if (!findings.has(key)) findings.set(key, f);
  };

  /** One text (a cell, a log line, a string inside either), and whatever JSON or bytea it holds. */
  const scanText = (text: string, where: string, opts: { log: boolean }, depth = 0): void => {
    if (depth > 4 || text.length === 0) return;
    for (const p of findPans(text)) add('pan', where, text, p.index, p.index + p.match.length, `PAN ${maskPan(p.match)}`);
    for (const m of text.matchAll(CODE_IN_TEXT)) {
      if (hasDigit(m[2])) add('security_code', where, text, m.index, m.index + m[0].length, codeLabel(m[1]!, m[2]!));
    }
    for (const s of known) {
      // The key without its whsec_/sk_ prefix is the secret just the same.
      for (const form of new Set([s.value, s.value.replace(/^(?:whsec_|sk_)/, '')])) {
        const i = text.indexOf(form);
        if (i >= 0) add('secret', where, text, i, i + form.length, s.name);
      }
    }
    for (const m of text.matchAll(PRIVATE_KEY_SHAPE)) if (!known.some((s) => s.value === m[0])) add('secret', where, text, m.index, m.index + m[0].length, 'a private secret key (sk_…)');
    for (const m of text.matchAll(opts.log ? WHSEC_IN_LOG : WHSEC_SHAPE)) add('secret', where, text, m.index, m.index + m[0].length, 'a signing secret (whsec_…)');

    const trimmed = text.trimStart();
    if (/^\\x[0-9a-f]*$/i.test(text)) {
      // bytea: a secret's raw bytes (e.g. a whsec_ key decoded) must not be stored either.
      for (const s of known) {
        for (const form of secretByteForms(s.value)) {
          const i = text.indexOf(form);
          if (i >= 0) add('secret', `${where} (bytea)`, text, i, i + form.length, `${s.name} (raw bytes)`);
        }
      }
      scanText(Buffer.from(text.slice(2), 'hex').toString('latin1'), `${where} (bytea)`, opts, depth + 1);
    } else if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      walk(parsed, where, opts, depth);
    }
  };

  /** Keys of parsed JSON (security codes) and its strings (unescaped, maybe JSON or bytea again). */
  const walk = (value: unknown, where: string, opts: { log: boolean }, depth: number): void => {
    if (Array.isArray(value)) for (const v of value) walk(v, where, opts, depth);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (CODE_KEY.test(k) && hasDigit(v)) {
          const text = JSON.stringify({ [k]: v });
          add('security_code', where, text, 0, text.length, codeLabel(k, String(v)));
        }
        if (opts.log && personalNames.has(k) && !isEmptyOrCensored(v)) {
          add('personal', where, k, 0, k.length, `personal field ${k} logged with a value`);
        }
        walk(v, where, opts, depth);
      }
    } else if (typeof value === 'string') scanText(value, where, opts, depth + 1);
  };

  logs.forEach((line, i) => scanText(line, `log line ${i + 1}`, { log: true }));

  if (db) {
    const tables = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 1`,
    );
    if (tables.some((t) => t.name === 'customers')) {
      // A deleted customer keeps nothing the spec declares personal on Customer (its column has the field's name).
      const deleted = await db.query<{ id: string; j: Record<string, unknown> }>('SELECT id, to_jsonb(c) AS j FROM customers c WHERE deleted_at IS NOT NULL');
      for (const row of deleted) {
        for (const f of personal.fieldsOf('Customer')) {
          if (f.name in row.j && !isEmptyOrCensored(row.j[f.name])) {
            const label = `personal field ${f.name} kept on a deleted customer`;
            add('personal', `table customers.${f.name} (id=${row.id})`, label, 0, label.length, label);
          }
        }
      }
    }
    for (const { name } of tables) {
      // Every column of every row as text (numbers exact, jsonb as JSON text, bytea as \x hex).
      const cells = await db.query<{ row: string; id: string | null; key: string; value: string | null }>(
        `SELECT r.n::text AS row, r.j->>'id' AS id, e.key, e.value
           FROM (SELECT row_number() OVER () AS n, to_jsonb(t) AS j FROM "${name.replace(/"/g, '""')}" t) r,
                jsonb_each_text(r.j) e`,
      );
      for (const c of cells) {
        if (c.value === null) continue;
        scanText(c.value, `table ${name}.${c.key} (${c.id !== null ? `id=${c.id}` : `row ${c.row}`})`, { log: false });
      }
    }
  }
  return [...findings.values()];
}

/** Nothing personal left in a value: null, an empty string or list, or the logger's censor mark. */
function isEmptyOrCensored(v: unknown): boolean {
  return v === null || v === undefined || v === '' || v === '[redacted]' || (Array.isArray(v) && v.length === 0);
}

/** The hex of a secret's bytes as bytea would hold them: its UTF-8, and the key it encodes (base64). */
function secretByteForms(value: string): string[] {
  const forms = [Buffer.from(value, 'utf8').toString('hex')];
  const b64 = value.replace(/^(?:whsec_|sk_)/, '');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64)) {
    const raw = Buffer.from(b64, b64.includes('-') || b64.includes('_') ? 'base64url' : 'base64');
    if (raw.length >= 16) forms.push(raw.toString('hex'));
  }
  return forms;
}

/** For an Error: one line per finding, masked. */
export function describeFindings(findings: readonly Finding[], limit = 40): string {
  const lines = findings.slice(0, limit).map((f) => `  - ${f.kind} in ${f.where}: ${f.excerpt}`);
  if (findings.length > limit) lines.push(`  … and ${findings.length - limit} more`);
  return lines.join('\n');
}
