/**
 * The hosted form's decisions that need no browser: the card rules its script runs (the server's own
 * card-validator files, wrapped by src/hosted/card-rules.ts) agree with the vault's validation card by card;
 * which embedding origin a page accepts; which language it speaks. The pages themselves are tested in
 * Chromium by checkout-browser.test.ts.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { cardRulesScript } from '../src/hosted/card-rules.js';
import { chooseLanguage } from '../src/hosted/messages.js';
import { chooseParentOrigin } from '../src/hosted/origins.js';
import { detectBrand, validateCard } from '../src/vault/card-validation.js';

interface BrowserRules {
  validator: { number(n: string, o: object): { card: { type: string; lengths: number[]; code: { size: number } } | null; isValid: boolean } };
  brandOfType: Record<string, string>;
  maxYearsAhead: number;
}

/** The script evaluated as a browser would: a fresh global with `window`, nothing from Node. */
function browserRules(): BrowserRules {
  const window: { payorchCardRules?: BrowserRules } = {};
  runInNewContext(cardRulesScript().body, { window });
  return window.payorchCardRules!;
}

describe('the browser card rules (card-rules.js)', () => {
  const rules = browserRules();
  const PANS = [
    '4507990000000002', '4111111111111111', '4507990000000003', '5252440000000002', '2221000000000009', '378282246310005', '371449635398431',
    '36227206271667', '6011111111111117', '3530111333300000', '6200000000000005', '6362970000457013', '6062826786276634', '2200000000000004',
    '9792000000000001', '5000000000000000611', '4000', '1234567812345670', '6759649826438453',
  ];

  it.each(PANS)('%s: the same brand, lengths, security-code size and validity as the server', (pan) => {
    const browser = rules.validator.number(pan, { luhnValidateUnionPay: true });
    const server = detectBrand(pan);
    const browserBrand = browser.card ? rules.brandOfType[browser.card.type] : undefined;
    expect(browserBrand).toBe(server?.brand);
    if (server) {
      expect(browser.card!.lengths).toEqual(server.lengths);
      expect(browser.card!.code.size).toBe(server.securityCodeSize);
    }
    const serverOk = validateCard({ number: pan, expiration_month: 12, expiration_year: 40, security_code: '1'.repeat(server?.securityCodeSize ?? 3) }, new Date('2030-01-01T00:00:00Z')).ok;
    // What the form lets through (brand known, a length of the brand, Luhn) is what the server accepts.
    const formOk = browserBrand !== undefined && browser.card!.lengths.includes(pan.length) && browser.isValid;
    expect(formOk).toBe(serverOk);
  });

  it('is one self-contained script: no import, no require left for the browser to resolve', () => {
    const { body, etag } = cardRulesScript();
    expect(body).not.toMatch(/^\s*import\b/m);
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(rules.maxYearsAhead).toBe(20);
  });
});

describe('chooseParentOrigin', () => {
  const allowed = ['https://shop.example', 'http://127.0.0.1:8080'];
  it.each([
    ['https://shop.example', allowed, 'https://shop.example'],
    ['http://127.0.0.1:8080', allowed, 'http://127.0.0.1:8080'],
    ['https://shop.example/', allowed, 'https://shop.example'],
    ['https://evil.example', allowed, undefined],
    ['https://shop.example.evil.example', allowed, undefined],
    ['https://shop.example/path', allowed, undefined],
    ['javascript:alert(1)', allowed, undefined],
    [['https://shop.example'], allowed, undefined],
    [undefined, allowed, undefined],
    [undefined, ['https://shop.example'], 'https://shop.example'],
    ['', ['https://shop.example'], 'https://shop.example'],
    [undefined, [], undefined],
  ])('%o among %o → %s', (requested, origins, expected) => {
    expect(chooseParentOrigin(requested, origins)).toBe(expected);
  });
});

describe('chooseLanguage', () => {
  it.each([
    ['pt-BR', 'US', 'pt'],
    ['es-419', 'BR', 'es'],
    ['EN', 'BR', 'en'],
    ['fr', 'BR', 'pt'],
    [undefined, 'MX', 'es'],
    [['es'], 'US', 'en'],
    [undefined, null, 'en'],
  ])('lang %o, country %s → %s', (lang, country, expected) => {
    expect(chooseLanguage(lang, country)).toBe(expected);
  });
});
