/** The browser helper's types: what a merchant page may pass and what it gets back. */
import { expectTypeOf, it } from 'vitest';
import { mountCardForm, type CardFormResult, type MountCardFormOptions } from '../src/checkout.js';

it('mountCardForm takes an element and options, resolves the token result', () => {
  expectTypeOf(mountCardForm).parameter(0).toEqualTypeOf<HTMLElement>();
  expectTypeOf(mountCardForm).returns.resolves.toEqualTypeOf<CardFormResult>();
  expectTypeOf<CardFormResult['token']>().toEqualTypeOf<string>();
  expectTypeOf<MountCardFormOptions['lang']>().toEqualTypeOf<'en' | 'es' | 'pt' | undefined>();
  // @ts-expect-error the secret key has no place in the browser helper
  const bad: MountCardFormOptions = { origin: 'https://pay.example', sessionId: 's', publicKey: 'pk', privateSecretKey: 'sk' };
  void bad;
});
