/**
 * Money at the API edge: JSON numbers in major units, checked against the currency's ISO 4217 minor
 * units and turned into exact decimal text for NUMERIC columns (never arithmetic on floats).
 */

// ISO 4217 minor units of the active codes that differ from 2. COP is treated as 0, as Yuno and the
// Colombian acquirers do (ISO lists 2, but no centavo amounts are processed).
const MINOR_UNITS_NOT_2: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, COP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

// The remaining active ISO 4217 codes (2 minor units).
const TWO_DECIMALS = new Set(
  `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW
   CNY COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS
   INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN
   NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN
   SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL`.split(/\s+/),
);

/** Minor units of an ISO 4217 currency, or undefined when the code is not one. */
export function minorUnits(currency: string): number | undefined {
  if (currency in MINOR_UNITS_NOT_2) return MINOR_UNITS_NOT_2[currency];
  return TWO_DECIMALS.has(currency) ? 2 : undefined;
}

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
