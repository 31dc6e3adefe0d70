/**
 * What a value from a provider may be once it crosses the adapter boundary (normalized-provider.ts): a
 * provider's answer is input like a client's, so each value is held to a length, a character set and,
 * for codes, a known set (anything else is OTHER). Nothing a provider sends reaches storage, an API
 * answer, a log or a metric label before passing here.
 */

/** A normalized code outside the known set. */
export const OTHER = 'OTHER';

/**
 * Our response codes (Transaction.response_code, ProviderResult.responseCode): every code an adapter may
 * report. A connector maps its provider's codes onto these; any other is stored as OTHER.
 */
export const RESPONSE_CODES: readonly string[] = [
  'SUCCEEDED',
  'DECLINED',
  'DECLINED_BY_BANK',
  'DO_NOT_HONOR',
  'INSUFFICIENT_FUNDS',
  'INVALID_SECURITY_CODE',
  'INVALID_CARD_DATA',
  'REPORTED_STOLEN',
  'PROVIDER_ERROR',
  'TRANSACTION_NOT_FOUND',
  'PROVIDER_AUTHENTICATION_FAILED',
  'PROVIDER_REFERENCE_CLOSED',
  'PROVIDER_REQUEST_REJECTED',
  'CAPTURE_DECLINED',
  'VOID_DECLINED',
  'REFUND_DECLINED',
  // A capture, cancel or refund the provider accepted, then reported failed in a notification.
  'FAILED_AT_PROVIDER',
];
const RESPONSE_CODE_SET: ReadonlySet<string> = new Set(RESPONSE_CODES);

export const OUTCOMES = ['SUCCEEDED', 'DECLINED', 'ERROR'] as const;

/** Control characters, bidi overrides and other invisible format characters: never kept in a provider's text. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

/**
 * A run of digits (single spaces or dashes between): masked whole when any 13–19 digits of it in a row
 * pass the Luhn check, so a card number with digits around it (a reference, a date) is masked too.
 */
const DIGIT_RUN = /[0-9](?:[ -]?[0-9]){12,}/g;
const SECRET_LIKE = [
  /\b(?:sk|rk|pk|whsec|sk_live|sk_test|sk_sandbox)_[A-Za-z0-9_]{6,}/g, // API keys and webhook secrets (Stripe-style prefixes, ours)
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, // an Authorization header's value
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, // a JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
export const REDACTED = '[REDACTED]';

/**
 * An identifier in UUID form (our references, many providers' ids): its hex groups are often decimal
 * digits for 13 and more in a row across the dashes, and some window of those passes Luhn one time in
 * ten; it is an id, not a card number, so digit runs are never looked for across one.
 */
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** Masks what looks like a card number, key or token in a provider's text. */
export function redactText(s: string): string {
  let out = '';
  let from = 0;
  for (const id of s.matchAll(UUID)) {
    out += maskCardNumbers(s.slice(from, id.index)) + id[0];
    from = id.index + id[0].length;
  }
  out += maskCardNumbers(s.slice(from));
  for (const pattern of SECRET_LIKE) out = out.replace(pattern, REDACTED);
  return out;
}

function maskCardNumbers(s: string): string {
  return s.replace(DIGIT_RUN, (m) => (holdsCardNumber(m.replace(/[ -]/g, '')) ? REDACTED : m));
}

function holdsCardNumber(digits: string): boolean {
  for (let length = 13; length <= Math.min(19, digits.length); length++) {
    for (let start = 0; start + length <= digits.length; start++) if (luhn(digits.slice(start, start + length))) return true;
  }
  return false;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Text storable anywhere: well-formed UTF-16, no NUL or invisible characters, whitespace collapsed, cut at `max`. */
export function cleanText(s: string, max: number): string {
  const cleaned = (s as string & { toWellFormed(): string }).toWellFormed().replace(INVISIBLE, ' ').replace(/\s+/g, ' ').trim();
  return cleaned.length <= max ? cleaned : `${cleaned.slice(0, max - 1)}…`;
}

/** A provider's message: cleaned, redacted, at most `max` characters (`fallback` when there is nothing left). */
export function providerMessage(value: unknown, max: number, fallback: string): string {
  if (typeof value !== 'string') return fallback;
  const text = cleanText(redactText(cleanText(value, 4 * max)), max);
  return text === '' ? fallback : text;
}
export function optionalMessage(value: unknown, max: number): string | null {
  const text = providerMessage(value, max, '');
  return text === '' ? null : text;
}

/** Our response code: one of RESPONSE_CODES, else OTHER. */
export function responseCode(value: unknown): string {
  return typeof value === 'string' && RESPONSE_CODE_SET.has(value) ? value : OTHER;
}

/** A short code (ISO 8583 field 39, a merchant advice code): its pattern, else OTHER. */
export function shortCode(value: unknown, pattern: RegExp): string {
  return typeof value === 'string' && pattern.test(value) ? value : OTHER;
}
export const ISO8583_CODE = /^[0-9A-Z]{2,3}$/;
export const ADVICE_CODE = /^[0-9]{2}$/;

/** An identifier or reference of the provider's: printable ASCII without spaces, 1–`max` characters, else null. */
export function providerReference(value: unknown, max = 255): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) value = String(value);
  return typeof value === 'string' && value.length <= max && /^[\x21-\x7e]+$/.test(value) ? value : null;
}

/** A token of a fixed vocabulary (a country code, a funding type): its pattern, else null. */
export function token(value: unknown, pattern: RegExp): string | null {
  return typeof value === 'string' && pattern.test(value) ? value : null;
}

/** A decimal amount in major units as text (a chargeback's amount): the shape the service stores, else null. */
export function providerAmount(value: unknown): string | null {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof text === 'string' && /^[0-9]{1,15}(\.[0-9]{1,8})?$/.test(text) ? text : null;
}
