/**
 * What redactText masks in a provider's text (src/providers/provider-values.ts): card numbers however
 * they are written, keys and tokens, and never an identifier in UUID form, whose hex groups are often
 * decimal digits across the dashes (a reference was once stored as "65e[REDACTED]a2b5ee5").
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactText } from '../src/providers/provider-values.js';

const PAN = '4507990000000002';

describe('redactText', () => {
  it.each([
    ['a PAN alone', PAN, REDACTED],
    ['a PAN in groups of four', '4507 9900 0000 0002', REDACTED],
    ['a PAN with dashes', '4507-9900-0000-0002', REDACTED],
    ['a PAN inside a longer digit run', `20261126${PAN}`, REDACTED],
    ['a PAN in a sentence', `card ${PAN} declined`, `card ${REDACTED} declined`],
    ['our reference whose digits once looked like a PAN', '65e92322-3109-4092-8600-11894a2b5ee5', '65e92322-3109-4092-8600-11894a2b5ee5'],
    ['that reference next to a PAN', `65e92322-3109-4092-8600-11894a2b5ee5 ${PAN}`, `65e92322-3109-4092-8600-11894a2b5ee5 ${REDACTED}`],
    ['a PAN dashed onto a reference', `${PAN}-65e92322-3109-4092-8600-11894a2b5ee5`, `${REDACTED}-65e92322-3109-4092-8600-11894a2b5ee5`],
    ['a secret key', 'key sk_test_abcdefgh123', `key ${REDACTED}`],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi', `Authorization: ${REDACTED}`],
    ['a short number', 'order 12345', 'order 12345'],
  ])('%s', (_what, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it('keeps every random UUID whole (10,000 of them, upper and lower case)', () => {
    for (let i = 0; i < 10_000; i++) {
      const id = i % 2 ? randomUUID() : randomUUID().toUpperCase();
      expect(redactText(`reference ${id}`)).toBe(`reference ${id}`);
    }
  });
});
