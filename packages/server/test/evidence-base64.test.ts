/**
 * decodeStrictBase64 against a plain reference (the RFC 4648 §4 grammar as one regular expression, plus
 * the canonical-padding rule) on random strings, so its fast path, which leans on how Node's decoder
 * treats characters outside the alphabet, accepts exactly what the grammar accepts and yields the same
 * bytes. The HTTP behaviour and the error messages are tested in disputes-evidence.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodeStrictBase64 } from '../src/payments/evidence.js';
import { seededRandom } from './support/seeded-random.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function reference(s: string): Buffer | undefined {
  if (!STRICT.test(s)) return undefined;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  if (pad > 0 && (ALPHABET.indexOf(s.charAt(s.length - pad - 1)) & (pad === 2 ? 0x0f : 0x03)) !== 0) return undefined;
  return Buffer.from(s, 'base64');
}

function agrees(s: string): void {
  const expected = reference(s);
  const got = decodeStrictBase64(s);
  expect(got.ok, JSON.stringify(s)).toBe(expected !== undefined);
  if (got.ok && expected) expect(got.bytes.equals(expected), JSON.stringify(s)).toBe(true);
}

describe('decodeStrictBase64 agrees with the RFC 4648 grammar', () => {
  it('on 20,000 random strings over base64, base64url, padding, whitespace and foreign characters', () => {
    const next = seededRandom(424242);
    const pool = `${ALPHABET}====-_ \n\t*.é😀\u0000`;
    const chars = [...pool];
    for (let i = 0; i < 20_000; i++) {
      const length = Math.floor(next() * 17);
      let s = '';
      for (let j = 0; j < length; j++) s += chars[Math.floor(next() * chars.length)];
      agrees(s);
    }
  });

  it('on the encodings of random bytes (all accepted, same bytes) and every one-character change of them', () => {
    const next = seededRandom(7);
    const replacements = ['A', 'B', '+', '/', '=', '-', '_', ' ', '\n', 'é', '*'];
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(next() * 20) }, () => Math.floor(next() * 256)));
      const encoded = bytes.toString('base64');
      const decoded = decodeStrictBase64(encoded);
      expect(decoded.ok && decoded.bytes.equals(bytes)).toBe(true);
      for (let at = 0; at < encoded.length; at++) {
        for (const r of replacements) agrees(encoded.slice(0, at) + r + encoded.slice(at + 1));
        agrees(encoded.slice(0, at) + encoded.slice(at + 1)); // one character dropped
      }
    }
  });

  it('refuses a valid encoding over the size limit before decoding it', () => {
    const encoded = Buffer.alloc(12).toString('base64');
    expect(decodeStrictBase64(encoded, 12).ok).toBe(true);
    const over = decodeStrictBase64(encoded, 11);
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.message).toMatch(/decodes to 12 bytes; at most 11 bytes/);
  });
});
