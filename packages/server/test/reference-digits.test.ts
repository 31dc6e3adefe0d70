/**
 * The doubles' voucher references (doubles/reference-digits.ts) are never card numbers to the suite's PAN
 * scan: the scan failed at random when an Adyen double's 14 random digits had a card prefix and passed
 * Luhn (about one OXXO voucher in 25). Random digits of the same lengths are flagged at that rate, so the
 * rule is checked against the scan itself, not against an idea of it.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { referenceDigits } from './doubles/reference-digits.js';
import { findPans } from './support/sensitive-data-scan.js';

const SAMPLES = 5_000;
const randomDigits = (n: number) => Array.from(randomBytes(n), (x) => String(x % 10)).join('');

describe('voucher references of the test doubles', () => {
  for (const length of [14, 16, 18]) {
    it(`${length} digits: never a PAN to the scan (${SAMPLES} samples), where plain random digits are`, () => {
      const flagged = (make: () => string) => Array.from({ length: SAMPLES }, make).filter((r) => findPans(r).length > 0).length;
      expect(flagged(() => referenceDigits(length))).toBe(0);
      expect(flagged(() => randomDigits(length))).toBeGreaterThan(SAMPLES / 100);
      expect(referenceDigits(length)).toMatch(new RegExp(`^1\\d{${length - 1}}$`));
    });
  }
});
