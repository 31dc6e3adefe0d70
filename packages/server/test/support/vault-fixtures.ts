/** Shared inputs of the card-vault tests: test cards, a future expiry, and enroll/customer helpers. */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Schemas } from '@payorch/types';
import { expect } from 'vitest';
import type { TestServer } from './harness.js';

/** Two digits, three years ahead: never expired, never "too far ahead". */
export const FUTURE_YY = (new Date().getUTCFullYear() + 3) % 100;

export const VISA_OK = '4507990000000002';
export const MASTERCARD_OK = '5252440000000002';
export const VISA_INSUFFICIENT_FUNDS = '4507990000000010';
export const VISA_PROVIDER_ERROR = '4507990000000077';
export const AMEX = '378282246310005';

export function cardBody(accountId: string, card: Partial<{ number: string; security_code: string; brand: string; expiration_month: number; expiration_year: number; holder_name: string }> = {}, extra: Record<string, unknown> = {}) {
  return {
    account_id: accountId,
    country: 'BR',
    type: 'CARD',
    workflow: 'DIRECT',
    card_data: {
      number: VISA_OK,
      holder_name: 'JOAO SILVA',
      expiration_month: 12,
      expiration_year: FUTURE_YY,
      security_code: '123',
      ...card,
    },
    ...extra,
  };
}

export async function createCustomer(t: TestServer, creds?: { public_api_key: string; private_secret_key: string }): Promise<string> {
  const client = creds ? t.clientFor(creds) : t.client;
  const { data, response } = await client.POST('/customers', { body: { merchant_customer_id: `cus-${randomUUID()}` } });
  expect(response.status).toBe(201);
  return data!.id;
}

/** POST an enrollment with raw HTTP (full control of headers and body). */
export function enroll(
  t: TestServer,
  customerId: string,
  body: unknown,
  options: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.key !== null) headers['x-idempotency-key'] = options.key ?? randomUUID();
  return t.fetch(`/customers/${customerId}/payment-methods`, { method: 'POST', headers, body: JSON.stringify(body) });
}

export async function enrollOk(t: TestServer, customerId: string, body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) {
  const res = await enroll(t, customerId, body, options);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['EnrolledPaymentMethod'];
}

/**
 * The VAULT_ENCRYPTION_KEY value of a running test server (its generated sandbox key file), for a second
 * server started on the same database: without the same key it refuses to start (it could not decrypt
 * the first one's cards).
 */
export async function vaultKeyOf(t: TestServer): Promise<string> {
  const file = JSON.parse(await readFile(join(t.running.deps.config.dataDir, 'vault-key.json'), 'utf8')) as { keys: { id: string; key: string }[] };
  return file.keys.map((k) => `${k.id}:${k.key}`).join(',');
}
