/** The browser helper's types: what a merchant page may pass and what it gets back. */
import { expectTypeOf, it } from 'vitest';
import { mountCardForm, type CardFormEnrollment, type CardFormResult, type MountCardFormOptions } from '../src/checkout.js';

declare const el: HTMLElement;

it('mountCardForm takes an element and options, resolves the token result', () => {
  expectTypeOf(mountCardForm(el, { origin: 'https://pay.example', sessionId: 's', publicKey: 'pk' })).resolves.toEqualTypeOf<CardFormResult>();
  expectTypeOf(mountCardForm(el, { origin: 'https://pay.example', customerSessionId: 'c', publicKey: 'pk' })).resolves.toEqualTypeOf<CardFormEnrollment>();
  // @ts-expect-error one session kind at a time
  void mountCardForm(el, { origin: 'https://pay.example', sessionId: 's', customerSessionId: 'c', publicKey: 'pk' });
  expectTypeOf<CardFormResult['token']>().toEqualTypeOf<string>();
  expectTypeOf<MountCardFormOptions['lang']>().toEqualTypeOf<'en' | 'es' | 'pt' | undefined>();
  // @ts-expect-error the secret key has no place in the browser helper
  const bad: MountCardFormOptions = { origin: 'https://pay.example', sessionId: 's', publicKey: 'pk', privateSecretKey: 'sk' };
  void bad;
});
