/**
 * Money at the API edge: JSON numbers in major units, checked against the currency's ISO 4217 minor
 * units and turned into exact decimal text for NUMERIC columns (never arithmetic on floats).
 */

// The ISO 4217 table lives with the connectors (providers/minor-units.ts), which convert amounts with it:
// payments uses providers, so providers import nothing of payments.
import { minorUnits } from '../providers/minor-units.js';

export type AmountCheck = { ok: true; decimal: string } | { ok: false; message: string };

/**
 * A request's amount object ({currency, value}) at `path` checked as toDecimal checks it; a refusal names
 * the member at fault (`<path>/currency` for a code that is no currency, else `<path>/value`).
 */
export function checkAmountAt(amount: { currency: string; value: number }, path: string): { ok: true; decimal: string } | { ok: false; error: { path: string; message: string } } {
  const checked = toDecimal(amount.value, amount.currency);
  if (checked.ok) return checked;
  return { ok: false, error: { path: `${path}/${/ISO 4217/.test(checked.message) ? 'currency' : 'value'}`, message: checked.message } };
}

/**
 * A JSON number as exact decimal text, if it has at most the currency's decimals. A number's shortest
 * round-trip form is the text the client sent for any amount with up to 15 significant digits.
 */
export function toDecimal(value: number, currency: string): AmountCheck {
  const units = minorUnits(currency);
  if (units === undefined) return { ok: false, message: `${currency} is not an ISO 4217 currency code` };
  const text = String(value);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!Number.isFinite(value) || value < 0 || !m) return { ok: false, message: 'must be a plain decimal amount' };
  const decimals = m[2]?.length ?? 0;
  if (decimals > units) {
    return { ok: false, message: units === 0 ? `must be a whole number: ${currency} has no minor unit` : `must have at most ${units} decimals for ${currency}` };
  }
  return { ok: true, decimal: text };
}

/**
 * Compares two decimal strings exactly (-1, 0, 1), either of them negative (a difference such as
 * captured − refunded can be: the comparison must see its sign, not only its digits).
 */
export function compareDecimal(a: string, b: string): number {
  const n = scaledDifference(a, b);
  return n === 0n ? 0 : n < 0n ? -1 : 1;
}

/** A decimal string (a leading minus allowed) as an integer count of 10^-scale units (exact). */
function scaled(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const [int = '0', frac = ''] = (negative ? text.slice(1) : text).split('.');
  const n = BigInt((int || '0') + frac.padEnd(scale, '0').slice(0, scale));
  return negative ? -n : n;
}

/** a − b in units of the finer of the two scales. */
function scaledDifference(a: string, b: string): bigint {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  return scaled(a, scale) - scaled(b, scale);
}

/** a + sign·b of two decimal strings, exactly, as a decimal string without trailing zeros. */
function combine(a: string, b: string, sign: 1n | -1n): string {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const n = scaled(a, scale) + sign * scaled(b, scale);
  const negative = n < 0n;
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** a − b of two decimal strings, exactly (may be negative). */
export function subtractDecimal(a: string, b: string): string {
  return combine(a, b, -1n);
}

/** a + b of two decimal strings, exactly. */
export function addDecimal(a: string, b: string): string {
  return combine(a, b, 1n);
}
