/**
 * Money at the API edge: JSON numbers in major units, checked against the currency's ISO 4217 minor
 * units and turned into exact decimal text for NUMERIC columns (never arithmetic on floats).
 */

// The ISO 4217 table lives with the connectors (providers/minor-units.ts), which convert amounts with it:
// payments uses providers, so providers import nothing of payments.
import { minorUnits } from '../providers/minor-units.js';

export type AmountCheck = { ok: true; decimal: string } | { ok: false; message: string };

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

/** Compares two decimal strings exactly (-1, 0, 1). */
export function compareDecimal(a: string, b: string): number {
  const [ai = '0', af = ''] = a.split('.');
  const [bi = '0', bf = ''] = b.split('.');
  const ia = ai.replace(/^0+(?=\d)/, '');
  const ib = bi.replace(/^0+(?=\d)/, '');
  if (ia.length !== ib.length) return ia.length < ib.length ? -1 : 1;
  if (ia !== ib) return ia < ib ? -1 : 1;
  const len = Math.max(af.length, bf.length);
  const fa = af.padEnd(len, '0');
  const fb = bf.padEnd(len, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** A non-negative decimal string as an integer count of 10^-scale units (exact). */
function scaled(text: string, scale: number): bigint {
  const [int = '0', frac = ''] = text.split('.');
  return BigInt(int + frac.padEnd(scale, '0').slice(0, scale));
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
