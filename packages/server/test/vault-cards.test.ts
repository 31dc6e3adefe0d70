/**
 * Table-driven card checks over the test numbers of every brand the vault recognizes (docs/design.md §5):
 * brand by IIN with the most specific range winning, lengths, Luhn, security-code length, expiry and
 * the brand the caller names; first on the validation module, then end to end through the API.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { detectBrand, isExpired, normalizeBrand, validateCard } from '../src/vault/card-validation.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer } from './support/harness.js';
import { cardBody, createCustomer, enroll, enrollOk, FUTURE_YY } from './support/vault-fixtures.js';

/** Published test numbers (Visa, Mastercard, Amex, Stripe/Adyen/Braintree lists), one or more per brand. */
const BRAND_CARDS: { number: string; brand: string; cvcLength: number; why: string }[] = [
  { number: '4111111111111111', brand: 'VISA', cvcLength: 3, why: 'Visa' },
  { number: '4507990000000002', brand: 'VISA', cvcLength: 3, why: 'Visa (sandbox approved card)' },
  { number: '4012888888881881', brand: 'VISA', cvcLength: 3, why: 'Visa' },
  { number: '4000000000000002', brand: 'VISA', cvcLength: 3, why: 'Visa (sandbox decline card)' },
  { number: '5555555555554444', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard 5-series' },
  { number: '5105105105105100', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard 5-series' },
  { number: '5252440000000002', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard (sandbox approved card)' },
  { number: '2223003122003222', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard 2-series' },
  { number: '2221000000000009', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard 2-series, lowest range' },
  { number: '2720000000000005', brand: 'MASTERCARD', cvcLength: 3, why: 'Mastercard 2-series, highest range' },
  { number: '378282246310005', brand: 'AMEX', cvcLength: 4, why: 'American Express 37' },
  { number: '371449635398431', brand: 'AMEX', cvcLength: 4, why: 'American Express 37' },
  { number: '340000000000009', brand: 'AMEX', cvcLength: 4, why: 'American Express 34' },
  { number: '6011111111111117', brand: 'DISCOVER', cvcLength: 3, why: 'Discover 6011' },
  { number: '6011000990139424', brand: 'DISCOVER', cvcLength: 3, why: 'Discover 6011' },
  { number: '6445000000000000', brand: 'DISCOVER', cvcLength: 3, why: 'Discover 644–649' },
  { number: '30569309025904', brand: 'DINERS', cvcLength: 3, why: 'Diners Club 300–305, 14 digits' },
  { number: '38520000023237', brand: 'DINERS', cvcLength: 3, why: 'Diners Club 38, 14 digits' },
  { number: '36227206271667', brand: 'DINERS', cvcLength: 3, why: 'Diners Club 36, 14 digits' },
  { number: '3530111333300000', brand: 'JCB', cvcLength: 3, why: 'JCB' },
  { number: '3566002020360505', brand: 'JCB', cvcLength: 3, why: 'JCB' },
  { number: '5066991111111118', brand: 'ELO', cvcLength: 3, why: 'Elo 506699 (inside Maestro 50 ranges: more specific)' },
  { number: '6362970000457013', brand: 'ELO', cvcLength: 3, why: 'Elo 636297 (inside Maestro 63: more specific)' },
  { number: '4011780000000006', brand: 'ELO', cvcLength: 3, why: 'Elo 401178 (inside Visa 4: more specific)' },
  { number: '6500310000000005', brand: 'ELO', cvcLength: 3, why: 'Elo 650031 (inside Discover 65: more specific)' },
  { number: '6062825624254001', brand: 'HIPERCARD', cvcLength: 3, why: 'Hipercard 606282 (inside Maestro 6)' },
  { number: '6370950000000005', brand: 'HIPER', cvcLength: 3, why: 'Hiper 637095' },
  { number: '6759649826438453', brand: 'MAESTRO', cvcLength: 3, why: 'Maestro 67' },
  { number: '5000000000000009', brand: 'MAESTRO', cvcLength: 3, why: 'Maestro 50' },
  { number: '501800000009', brand: 'MAESTRO', cvcLength: 3, why: 'Maestro, 12 digits' },
  { number: '6799990000000000003', brand: 'MAESTRO', cvcLength: 3, why: 'Maestro, 19 digits' },
  { number: '6200000000000005', brand: 'UNIONPAY', cvcLength: 3, why: 'UnionPay 62' },
  { number: '6205500000000000004', brand: 'UNIONPAY', cvcLength: 3, why: 'UnionPay, 19 digits' },
  { number: '2200000000000004', brand: 'MIR', cvcLength: 3, why: 'Mir 2200' },
];

describe('validateCard over every brand', () => {
  it.each(BRAND_CARDS)('$number is $brand ($why)', ({ number, brand, cvcLength }) => {
    const result = validateCard({ number, expiration_month: 12, expiration_year: FUTURE_YY, security_code: '7'.repeat(cvcLength), brand });
    expect(result).toEqual({
      ok: true,
      card: {
        pan: number,
        brand,
        iin: number.slice(0, number.length >= 16 ? 8 : 6),
        lfd: number.slice(-4),
        numberLength: number.length,
        securityCodeLength: cvcLength,
        expirationMonth: 12,
        expirationYear: FUTURE_YY,
        holderName: null,
      },
    });
  });

  it.each(BRAND_CARDS)('$brand $number: a changed last digit fails Luhn', ({ number }) => {
    const broken = number.slice(0, -1) + String((Number(number.at(-1)) + 1) % 10);
    const result = validateCard({ number: broken, expiration_month: 12, expiration_year: FUTURE_YY });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors).toContainEqual({ path: '/body/card_data/number', message: 'fails the Luhn check' });
  });

  it.each(BRAND_CARDS)('$brand $number: the wrong security-code length is refused', ({ number, brand, cvcLength }) => {
    const wrong = cvcLength === 4 ? '123' : '1234';
    const result = validateCard({ number, expiration_month: 12, expiration_year: FUTURE_YY, security_code: wrong });
    expect(!result.ok && result.errors).toContainEqual({ path: '/body/card_data/security_code', message: `must be ${cvcLength} digits for a ${brand} card` });
  });

  it('names the given brand when it does not match, accepting common spellings', () => {
    expect(normalizeBrand('American Express')).toBe('AMEX');
    expect(normalizeBrand('diners_club')).toBe('DINERS');
    expect(normalizeBrand('Master')).toBe('MASTERCARD');
    expect(normalizeBrand('visa')).toBe('VISA');
    const r = validateCard({ number: '4111111111111111', expiration_month: 12, expiration_year: FUTURE_YY, brand: 'amex' });
    expect(!r.ok && r.errors).toEqual([{ path: '/body/card_data/brand', message: 'is AMEX but the card number is a VISA card' }]);
  });

  it('refuses unknown IINs, wrong lengths and non-digits', () => {
    expect(detectBrand('1000000000000008')).toBeUndefined();
    const cases: [string, RegExp][] = [
      ['1000000000000008', /IIN/],
      ['45079900000000006', /17 digits; a VISA card has 16, 18, 19/],
      ['3782822463100052', /16 digits; a AMEX card has 15/],
      ['4507-9900-0000-0002', /digits only/],
      ['45079900002', /12 to 19/],
    ];
    for (const [number, message] of cases) {
      const r = validateCard({ number, expiration_month: 12, expiration_year: FUTURE_YY });
      expect(r.ok, number).toBe(false);
      expect(!r.ok && r.errors.some((e) => e.path === '/body/card_data/number' && message.test(e.message)), `${number}: ${JSON.stringify(r)}`).toBe(true);
    }
  });

  it('expiry: valid through the end of the month (judged in the latest time zone), not more than 20 years ahead', () => {
    const now = new Date('2026-06-15T12:00:00Z');
    expect(validateCard({ number: '4111111111111111', expiration_month: 6, expiration_year: 26 }, now).ok).toBe(true);
    expect(validateCard({ number: '4111111111111111', expiration_month: 5, expiration_year: 26 }, now).ok).toBe(false);
    expect(validateCard({ number: '4111111111111111', expiration_month: 12, expiration_year: 46 }, now).ok).toBe(true);
    expect(validateCard({ number: '4111111111111111', expiration_month: 1, expiration_year: 47 }, now).ok).toBe(false);
    // 1 June 05:00 UTC is still 31 May west of UTC: a card expiring 05/26 is still good there.
    expect(isExpired(5, 26, new Date('2026-06-01T05:00:00Z'))).toBe(false);
    expect(isExpired(5, 26, new Date('2026-06-01T13:00:00Z'))).toBe(true);
    const bad = validateCard({ number: '4111111111111111', expiration_month: 13, expiration_year: 26 }, now);
    expect(!bad.ok && bad.errors).toEqual([{ path: '/body/card_data/expiration_month', message: 'must be a month from 1 to 12' }]);
  });
});

for (const backend of backends()) {
  describe(`every brand through the API on ${backend}`, () => {
    const t = useServer(backend);

    it.each(BRAND_CARDS)('201 $brand $number ($why)', async ({ number, brand, cvcLength }) => {
      const customerId = await createCustomer(t);
      const m = await enrollOk(t, customerId, cardBody(t.sandbox.account_id, { number, brand, security_code: '4'.repeat(cvcLength) }));
      expectSchema('EnrolledPaymentMethod', m);
      expect(m.card_data).toMatchObject({
        brand,
        iin: number.slice(0, number.length >= 16 ? 8 : 6),
        lfd: number.slice(-4),
        number_length: number.length,
        security_code_length: cvcLength,
      });
      expect(m.name).toBe(`${brand} ****${number.slice(-4)}`);
      const icon = await fetch(m.icon!);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    });

    it.each(BRAND_CARDS.filter((c) => c.brand !== 'VISA'))('422 when $brand $number is declared VISA', async ({ number, brand, cvcLength }) => {
      const customerId = await createCustomer(t);
      const res = await enroll(t, customerId, cardBody(t.sandbox.account_id, { number, brand: 'VISA', security_code: '4'.repeat(cvcLength) }), { key: randomUUID() });
      const problem = await expectProblem(res, 422, 'INVALID_CARD');
      expect(problem.errors).toEqual([{ path: '/body/card_data/brand', message: `is VISA but the card number is a ${brand} card` }]);
    });
  });
}
