/**
 * Digits for a test double's voucher reference (an OXXO number, a ticket reference). A random run of
 * 13–19 digits is a card number to the suite's PAN scan (support/sensitive-data-scan.ts: a card-brand
 * prefix and Luhn) about one time in 25, which made the scan fail at random on a double's dice: such a
 * reference starts with 1, which no card number does. Providers' real references may look like anything;
 * this only keeps the scan judging the service.
 */
import { randomBytes } from 'node:crypto';

export function referenceDigits(length: number): string {
  return `1${Array.from(randomBytes(length - 1), (x) => String(x % 10)).join('')}`;
}
