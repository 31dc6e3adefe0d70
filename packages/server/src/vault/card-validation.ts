/**
 * Card checks before anything is vaulted (docs/design.md §5): digits, length and Luhn, brand from the IIN,
 * the brand the caller gave, security-code length for the brand, and expiry. Brand ranges, lengths and
 * security-code sizes come from `card-validator` (which bundles `credit-card-type`), a maintained
 * library: no IIN table is written here. Every failure names its field (422 INVALID_CARD).
 */
import cardValidator from 'card-validator';
import luhn10 from 'card-validator/dist/luhn-10.js';
import type { Schemas } from '@payorch/types';
import type { FieldError } from '../http/problems.js';

const { creditCardType } = cardValidator;

/** The API's brand names for the library's card types (the hosted form gets the same table: hosted/card-rules.ts). */
export const BRAND_OF_TYPE: Readonly<Record<string, string>> = {
  visa: 'VISA',
  mastercard: 'MASTERCARD',
  'american-express': 'AMEX',
  'diners-club': 'DINERS',
  discover: 'DISCOVER',
  jcb: 'JCB',
  unionpay: 'UNIONPAY',
  maestro: 'MAESTRO',
  elo: 'ELO',
  hipercard: 'HIPERCARD',
  hiper: 'HIPER',
  mir: 'MIR',
  troy: 'TROY',
  naranja: 'NARANJA',
  verve: 'VERVE',
};

/** Every brand name the vault gives a card (routing's CARD_BRAND condition takes these). */
export const CARD_BRANDS: readonly string[] = Object.values(BRAND_OF_TYPE);

/** Other spellings merchants send for the same brand (compared without spaces, dashes or underscores). */
const BRAND_ALIASES: Readonly<Record<string, string>> = {
  AMERICANEXPRESS: 'AMEX',
  DINERSCLUB: 'DINERS',
  DINERSCLUBINTERNATIONAL: 'DINERS',
  MASTER: 'MASTERCARD',
  MC: 'MASTERCARD',
  CUP: 'UNIONPAY',
  CHINAUNIONPAY: 'UNIONPAY',
};

/** Display names for labels ("Visa ending in 1111"). */
const DISPLAY_NAME: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(BRAND_OF_TYPE).map(([type, brand]) => [brand, creditCardType.getTypeInfo(type)?.niceType ?? brand]),
);

export function brandDisplayName(brand: string): string {
  return DISPLAY_NAME[brand] ?? brand;
}

/** "American Express", "amex", "diners_club" → the API's brand name; other values upper-cased as given. */
export function normalizeBrand(given: string): string {
  const compact = given.toUpperCase().replace(/[\s_-]+/g, '');
  return BRAND_ALIASES[compact] ?? (Object.values(BRAND_OF_TYPE).includes(compact) ? compact : given.trim().toUpperCase());
}

export interface CardInput {
  number: string;
  expiration_month: number;
  expiration_year: number;
  security_code?: string | undefined;
  brand?: string | undefined;
  holder_name?: string | undefined;
}

/** What the vault keeps about a card besides the encrypted PAN. */
export interface ValidatedCard {
  pan: string;
  brand: string;
  iin: string;
  lfd: string;
  numberLength: number;
  securityCodeLength: number;
  expirationMonth: number;
  expirationYear: number;
  holderName: string | null;
}

/** The card as answered (a token's or a payment's card_data): never the number, no fingerprint (the caller adds one where it has one). */
export function maskedCardData(c: ValidatedCard) {
  return {
    holder_name: c.holderName,
    iin: c.iin,
    lfd: c.lfd,
    number_length: c.numberLength,
    security_code_length: c.securityCodeLength,
    brand: c.brand,
    type: null,
    category: null,
    issuer_name: null,
    issuer_code: null,
    fingerprint: null,
    country_code: null,
    expiration_month: c.expirationMonth,
    expiration_year: c.expirationYear,
  } satisfies Schemas['TokenCardData'];
}

export type CardCheck = { ok: true; card: ValidatedCard } | { ok: false; errors: FieldError[] };

/** Cards expiring more than this many years ahead are typing mistakes (issuers use at most ~10). */
export const MAX_YEARS_AHEAD = 20;

const PATH = '/body/card_data';

/** The brand of a PAN by its IIN: the most specific matching range wins; undefined when none or ambiguous. */
export function detectBrand(pan: string): { brand: string; lengths: number[]; securityCodeSize: number } | undefined {
  // card-validator resolves overlapping ranges to the most specific one, and answers no card when ambiguous.
  const type = cardValidator.number(pan).card;
  if (!type) return undefined;
  const brand = BRAND_OF_TYPE[type.type];
  if (!brand) return undefined;
  return { brand, lengths: type.lengths, securityCodeSize: type.code.size };
}

/** IIN as the API shows it: 8 digits, 6 for PANs under 16 digits (PCI DSS truncation rules). */
export function iinOf(pan: string): string {
  return pan.slice(0, pan.length >= 16 ? 8 : 6);
}

export function validateCard(input: CardInput, now: Date = new Date()): CardCheck {
  const errors: FieldError[] = [];
  const pan = input.number;
  let securityCodeLength = 3;
  let brand: string | undefined;

  if (!/^[0-9]+$/.test(pan)) {
    errors.push({ path: `${PATH}/number`, message: 'must contain digits only' });
  } else if (pan.length < 12 || pan.length > 19) {
    errors.push({ path: `${PATH}/number`, message: `has ${pan.length} digits; a card number has 12 to 19` });
  } else {
    const detected = detectBrand(pan);
    if (!detected) {
      errors.push({ path: `${PATH}/number`, message: 'does not start with the IIN of a supported card brand' });
    } else {
      brand = detected.brand;
      securityCodeLength = detected.securityCodeSize;
      if (!detected.lengths.includes(pan.length)) {
        errors.push({
          path: `${PATH}/number`,
          message: `has ${pan.length} digits; a ${detected.brand} card has ${detected.lengths.join(', ')}`,
        });
      }
    }
    // Every brand, UnionPay included: the design requires Luhn for all cards the vault accepts.
    if (!luhn10(pan)) errors.push({ path: `${PATH}/number`, message: 'fails the Luhn check' });
  }

  if (input.brand !== undefined && brand !== undefined) {
    const given = normalizeBrand(input.brand);
    if (given !== brand) {
      errors.push({ path: `${PATH}/brand`, message: `is ${given} but the card number is a ${brand} card` });
    }
  }

  if (input.security_code !== undefined && brand !== undefined) {
    if (!/^[0-9]+$/.test(input.security_code) || input.security_code.length !== securityCodeLength) {
      errors.push({ path: `${PATH}/security_code`, message: `must be ${securityCodeLength} digits for a ${brand} card` });
    }
  }

  const month = input.expiration_month;
  const year = input.expiration_year;
  if (!Number.isInteger(month) || month < 1 || month > 12) {
    errors.push({ path: `${PATH}/expiration_month`, message: 'must be a month from 1 to 12' });
  } else if (!Number.isInteger(year) || year < 0 || year > 99) {
    errors.push({ path: `${PATH}/expiration_year`, message: 'must be two digits (29 for 2029)' });
  } else {
    const fullYear = 2000 + year;
    if (isExpired(month, year, now)) {
      errors.push({ path: `${PATH}/expiration_year`, message: `the card expired at the end of ${String(month).padStart(2, '0')}/${fullYear}` });
    } else if (fullYear > now.getUTCFullYear() + MAX_YEARS_AHEAD) {
      errors.push({ path: `${PATH}/expiration_year`, message: `${fullYear} is more than ${MAX_YEARS_AHEAD} years ahead` });
    }
  }

  if (errors.length > 0 || brand === undefined) return { ok: false, errors };
  return {
    ok: true,
    card: {
      pan,
      brand,
      iin: iinOf(pan),
      lfd: pan.slice(-4),
      numberLength: pan.length,
      securityCodeLength,
      expirationMonth: month,
      expirationYear: year,
      holderName: input.holder_name?.trim() || null,
    },
  };
}

/**
 * True when a card with this expiry can no longer be used at `now`. A card is valid through the last day
 * of its expiry month wherever the cardholder is, so the month is judged in the latest time zone (UTC-12).
 */
export function isExpired(month: number, year: number, now: Date = new Date()): boolean {
  const local = new Date(now.getTime() - 12 * 60 * 60 * 1000);
  const fullYear = 2000 + year;
  const nowYear = local.getUTCFullYear();
  return fullYear < nowYear || (fullYear === nowYear && month < local.getUTCMonth() + 1);
}
