/**
 * Exact decimal arithmetic on amounts (src/payments/money.ts). Differences such as captured − refunded −
 * in flight can be negative once a provider undoes a capture after a refund: the comparison must see the
 * sign (it once compared digits only, and -40 passed for more than 0).
 */
import { describe, expect, it } from 'vitest';
import { addDecimal, compareDecimal, subtractDecimal } from '../src/payments/money.js';

describe('compareDecimal', () => {
  it.each([
    ['0', '0', 0],
    ['150.5', '150.50', 0],
    ['0.00', '0', 0],
    ['10', '9.99', 1],
    ['9.99', '10', -1],
    ['100', '99', 1],
    ['0.1', '0.09', 1],
    ['-40', '0', -1],
    ['0', '-40', 1],
    ['-40', '-4', -1],
    ['-0.5', '0', -1],
    ['-0.5', '-0.50', 0],
    ['10', '-40', 1],
    ['99999999999.99', '100000000000', -1],
  ] as const)('%s vs %s → %i', (a, b, expected) => {
    expect(compareDecimal(a, b)).toBe(expected);
  });
});

describe('subtractDecimal and addDecimal', () => {
  it.each([
    ['150.5', '40', '110.5'],
    ['0', '40', '-40'],
    ['-40', '10', '-50'],
    ['0.1', '0.09', '0.01'],
    ['10', '10.00', '0'],
  ] as const)('%s − %s = %s', (a, b, expected) => {
    expect(subtractDecimal(a, b)).toBe(expected);
  });
  it.each([
    ['150.5', '40', '190.5'],
    ['-40', '40', '0'],
    ['0.005', '0.005', '0.01'],
  ] as const)('%s + %s = %s', (a, b, expected) => {
    expect(addDecimal(a, b)).toBe(expected);
  });
});
