/**
 * Validation messages say what to send (src/http/field-messages.ts): every format and pattern the spec
 * uses has a phrase (the table below is read from the bundled spec, so a new format or pattern without one
 * fails here), and length and range errors are phrased from the field's schema. No server: the mapping is
 * a function of the spec; customers.test.ts checks it is what a 400 answers.
 */
import { describe, expect, it } from 'vitest';
import { createFieldMessages, describePattern, FORMAT_PHRASES } from '../src/http/field-messages.js';
import { loadSpec } from '../src/http/spec.js';

const spec = loadSpec();
const messages = createFieldMessages(spec);

/** Every `format` and `pattern` anywhere in the spec. */
function used(): { formats: string[]; patterns: string[] } {
  const formats = new Set<string>();
  const patterns = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    // A schema's format/pattern (a member *named* format or pattern is a properties entry: an object).
    if (typeof o.format === 'string') formats.add(o.format);
    if (typeof o.pattern === 'string') patterns.add(o.pattern);
    Object.values(o).forEach(walk);
  };
  walk(spec);
  return { formats: [...formats].sort(), patterns: [...patterns].sort() };
}
const { formats, patterns } = used();

describe('every format and pattern the spec uses has a message', () => {
  it('finds them (the table is not empty)', () => {
    expect(formats).toEqual(expect.arrayContaining(['uuid', 'date', 'date-time', 'email']));
    expect(patterns.length).toBeGreaterThan(10);
  });

  it.each(formats)('format %s', (format) => {
    const message = messages(undefined, '/body/x', `must match format "${format}"`, 'format.openapi.validation');
    expect(FORMAT_PHRASES[format], `no phrase for format ${format}: add one to FORMAT_PHRASES`).toBeDefined();
    expect(message).toBe(`must be ${FORMAT_PHRASES[format]}`);
  });

  it.each(patterns)('pattern %s', (pattern) => {
    const phrase = describePattern(pattern);
    expect(phrase, `no phrase for pattern ${pattern}: add one to PATTERN_PHRASES`).toBeDefined();
    expect(messages(undefined, '/body/x', `must match pattern "${pattern}"`, 'pattern.openapi.validation')).toBe(`must be ${phrase}`);
  });
});

describe('simple patterns read as what they admit', () => {
  it.each([
    ['^[0-9]{4,20}$', '4 to 20 digits'],
    ['^[0-9]{4}$', '4 digits'],
    ['^[a-z0-9_-]{1,32}$', '1 to 32 lowercase letters, digits, `_` or `-`'],
    ['^[A-Za-z0-9_-]+$', 'one or more letters, digits, `_` or `-`'],
    ['^[A-Z]{3}$', 'an ISO 4217 currency code: 3 capital letters such as USD'],
  ])('%s → %s', (pattern, phrase) => expect(describePattern(pattern)).toBe(phrase));
  it('a pattern it cannot read has no phrase (the table above then fails for it)', () => {
    expect(describePattern('^(a|b)+c?$')).toBeUndefined();
  });
});

/** The schema of a property reached by names from a component (to read what the message must quote). */
function property(component: string, ...names: string[]): { description?: string; minimum?: number; maximum?: number; minLength?: number; maxLength?: number } {
  type Node = { $ref?: string; properties?: Record<string, Node> } & Record<string, unknown>;
  const schemas = (spec as unknown as { components: { schemas: Record<string, Node> } }).components.schemas;
  const deref = (n: Node): Node => (n.$ref ? deref(schemas[n.$ref.split('/').pop()!]!) : n);
  return names.reduce((node, name) => deref(node.properties![name]!), deref(schemas[component]!)) as never;
}

describe('length and range errors, phrased from the field', () => {
  const createPayment = { method: 'post', template: '/payments' };
  const getPayment = { method: 'get', template: '/payments/{payment_id}' };
  const createCustomer = { method: 'post', template: '/customers' };

  it("expiration_year: the schema's range and its description (two digits, YY)", () => {
    const year = property('CreatePaymentRequest', 'payment_method', 'detail', 'card', 'card_data', 'expiration_year');
    const message = messages(createPayment, '/body/payment_method/detail/card/card_data/expiration_year', 'must be <= 99', 'maximum.openapi.validation');
    expect(message).toBe(`must be an integer from ${year.minimum} to ${year.maximum} — ${year.description!.split(/(?<=\.)\s/)[0]!.replace(/\.$/, '')}`);
    expect(message).toMatch(/two digits/i);
  });

  it('a malformed id in the path: a UUID, with the example of the spec', () => {
    for (const [message, code] of [
      ['must NOT have fewer than 36 characters', 'minLength.openapi.validation'],
      ['must NOT have more than 64 characters', 'maxLength.openapi.validation'],
    ]) {
      expect(messages(getPayment, '/params/payment_id', message!, code)).toMatch(/^must be a UUID as this API returned it, for example [0-9a-f-]{36}$/);
    }
  });

  it('a string with a format or pattern: its shape, not its length', () => {
    expect(messages(createPayment, '/body/customer_payer/id', 'must NOT have more than 36 characters', 'maxLength.openapi.validation')).toBe(`must be ${FORMAT_PHRASES.uuid}`);
    expect(messages(createCustomer, '/body/phone/number', 'must NOT have more than 20 characters', 'maxLength.openapi.validation')).toBe('must be 4 to 20 digits');
  });

  it('a plain string: its bounds and its description', () => {
    const id = property('CreateCustomerRequest', 'merchant_customer_id');
    expect(messages(createCustomer, '/body/merchant_customer_id', 'must NOT have fewer than 3 characters', 'minLength.openapi.validation')).toBe(
      `must be ${id.minLength} to ${id.maxLength} characters long — ${id.description!.replace(/\.$/, '')}`,
    );
    expect(messages(createCustomer, '/body/first_name', 'must NOT have fewer than 3 characters', 'minLength.openapi.validation')).toBe('must be 3 to 255 characters long');
  });

  it('other errors keep the validator’s words', () => {
    expect(messages(createCustomer, '/body/email', 'must be string', 'type.openapi.validation')).toBe('must be string');
    expect(messages(createCustomer, '/body', "must have required property 'merchant_customer_id'", 'required.openapi.validation')).toBe(
      "must have required property 'merchant_customer_id'",
    );
  });
});
