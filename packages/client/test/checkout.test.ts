/**
 * The hosted form helper's two decisions, without a browser (the real browser run is the server's
 * checkout-browser test, which mounts this module on a merchant page): the form's address, and which
 * message is the form's answer (its frame, payorch's origin, a token) and which is not.
 */
import { describe, expect, it } from 'vitest';
import { cardFormUrl, isCardFormResult } from '../src/checkout.js';

const origin = 'https://pay.example.com';
const session = '8e7d6c5b-4a39-4281-9f0e-d1c2b3a49586';

describe('cardFormUrl', () => {
  it.each([
    [{ origin, sessionId: session, publicKey: 'pk_1' }, `${origin}/checkout/sessions/${session}?public_key=pk_1&parent_origin=https%3A%2F%2Fshop.example`],
    [{ origin: `${origin}/ignored/path`, customerSessionId: 'cs 1', publicKey: 'pk_1', lang: 'pt' as const }, `${origin}/checkout/customer-sessions/cs%201?public_key=pk_1&parent_origin=https%3A%2F%2Fshop.example&lang=pt`],
  ])('%o', (options, expected) => {
    expect(cardFormUrl(options, 'https://shop.example')).toBe(expected);
  });

  it.each([
    [{ origin: 'javascript:alert(1)', sessionId: session, publicKey: 'pk' }, /http\(s\) origin/],
    [{ origin, publicKey: 'pk' }, /exactly one/],
    [{ origin, sessionId: session, customerSessionId: session, publicKey: 'pk' }, /exactly one/],
  ])('refuses %o', (options, message) => {
    expect(() => cardFormUrl(options, 'https://shop.example')).toThrow(message);
  });
});

describe('isCardFormResult', () => {
  const frame = { name: 'the form frame' };
  const good = { origin, source: frame, data: { type: 'payorch:token', token: 'tok', card: { brand: 'VISA', lfd: '1111' } } };
  it('accepts the form frame’s token message and its enrollment message', () => {
    expect(isCardFormResult(good as never, origin, frame)).toBe(true);
    expect(isCardFormResult({ ...good, data: { type: 'payorch:enrolled', vaulted_token: 'vt', card: good.data.card } } as never, origin, frame)).toBe(true);
  });
  it.each([
    ['another origin', { ...good, origin: 'https://evil.example' }],
    ['another window (a second frame of the same origin)', { ...good, source: { name: 'other' } }],
    ['not a token message', { ...good, data: { type: 'payorch:ready' } }],
    ['a token that is not a string', { ...good, data: { type: 'payorch:token', token: 42 } }],
    ['no data', { ...good, data: null }],
    ['an enrollment message without its vaulted_token', { ...good, data: { type: 'payorch:enrolled', token: 'tok' } }],
  ])('ignores %s', (_name, event) => {
    expect(isCardFormResult(event as never, origin, frame)).toBe(false);
  });
});
