/**
 * Fixtures of the payments tests: customers, card payments, chargebacks, PDF evidence and signed
 * provider notifications, all through the real API (or signed with the provider's stored secret).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { expect, inject } from 'vitest';
import type { Schemas } from '@payorch/types';
import { leasePglite } from './pglite-pool.js';
import { loadConfig } from '../../src/platform/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { startServer } from '../../src/server.js';
import { ADMIN_KEY as ADMIN_API_KEY, sandboxProviderSecret, type Credentials, type TestServer } from './harness.js';

export const CARDS = {
  approved: '4507990000000002',
  approvedMastercard: '5252440000000002',
  insufficientFunds: '4507990000000010',
  declinedByBank: '4507990000000028',
  doNotHonor: '4507990000000036',
  invalidSecurityCode: '4507990000000044',
  invalidCardData: '4507990000000051',
  stolen: '4507990000000069',
  providerError: '4507990000000077',
  declined: '4000000000000002',
  chargebackFollows: '4000000000000259',
  captureFails: '4507990000000101',
  refundFails: '4507990000000093',
} as const;

/** A card that expires a few years from now. */
export function rawCard(number: string, overrides: Partial<Schemas['CreatePaymentCardData']> = {}): Schemas['CreatePaymentCardData'] {
  return {
    number,
    holder_name: 'JOHN DOE',
    expiration_month: 12,
    expiration_year: (new Date().getUTCFullYear() + 3) % 100,
    security_code: '123',
    ...overrides,
  };
}

export async function createCustomer(t: TestServer, client = t.client): Promise<string> {
  const { data, response } = await client.POST('/customers', {
    body: {
      merchant_customer_id: `cus-${randomUUID()}`,
      first_name: 'John',
      last_name: 'Doe',
      email: 'john.doe@example.com',
      nationality: 'BR',
      document: { document_type: 'CPF', document_number: '35104075012' },
    },
  });
  expect(response.status).toBe(201);
  return data!.id;
}

export function paymentBody(
  t: TestServer,
  customerId: string,
  overrides: Partial<Schemas['CreatePaymentRequest']> & { card?: string } = {},
): Schemas['CreatePaymentRequest'] {
  const { card = CARDS.approved, ...rest } = overrides;
  return {
    account_id: t.sandbox.account_id,
    description: 'Order ORDER-1001 at Acme Store',
    country: 'BR',
    merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`,
    amount: { currency: 'BRL', value: 150.5 },
    customer_payer: { id: customerId },
    payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(card) } } },
    ...rest,
  };
}

/** POST /payments over raw HTTP (a fresh idempotency key unless given). */
export function postPayment(t: TestServer, body: unknown, init: { key?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  return t.fetch('/payments', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': init.key ?? randomUUID(), ...init.headers },
    body: JSON.stringify(body),
  });
}

/**
 * Creates a payment through POST /payments and returns its create response (Yuno's create shape:
 * `transactions` is the transaction just made, `transactions_history` every transaction so far).
 */
export async function createPayment(t: TestServer, overrides: Parameters<typeof paymentBody>[2] = {}, customerId?: string): Promise<Schemas['CreatedPayment']> {
  const res = await postPayment(t, paymentBody(t, customerId ?? (await createCustomer(t)), overrides));
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['CreatedPayment'];
}

export async function injectChargeback(t: TestServer, paymentId: string, body: Record<string, unknown> = {}): Promise<Schemas['Transaction']> {
  const res = await t.fetch(`/sandbox/payments/${paymentId}/chargebacks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['Transaction'];
}

/** A payment with a chargeback received: IN_DISPUTE / RECEIVED, and its chargeback transaction. */
export async function chargedBackPayment(t: TestServer): Promise<{ payment: Schemas['CreatedPayment']; chargeback: Schemas['Transaction'] }> {
  const payment = await createPayment(t);
  const chargeback = await injectChargeback(t, payment.id);
  return { payment, chargeback };
}

/**
 * A minimal well-formed PDF of exactly `size` bytes (padded inside a comment before the trailer), as
 * base64. `trailing` is appended after %%EOF (counted in `size`).
 */
export function pdfBase64(size = 2048, trailing = '\n'): string {
  const head = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%';
  const tail = `\ntrailer << /Root 1 0 R >>\n%%EOF${trailing}`;
  const pad = size - head.length - tail.length;
  if (pad < 0) throw new Error(`a PDF of ${size} bytes is too small`);
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.alloc(pad, 0x41), Buffer.from(tail, 'latin1')]).toString('base64');
}

export function evidence(overrides: Partial<Schemas['DisputeEvidence']> = {}): Schemas['DisputeEvidence'] {
  return { content_type: 'application/pdf', file_name: 'receipt.pdf', content_category: 'RECEIPT', content: pdfBase64(), ...overrides };
}

/** POST (or PATCH) the dispute over raw HTTP with a fresh idempotency key unless given. */
export function postDispute(
  t: TestServer,
  paymentId: string,
  transactionId: string,
  body: unknown,
  init: { key?: string; method?: 'POST' | 'PATCH'; raw?: string } = {},
): Promise<Response> {
  return t.fetch(`/payments/${paymentId}/transactions/${transactionId}/dispute`, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': init.key ?? randomUUID() },
    body: init.raw ?? JSON.stringify(body),
  });
}

/** The sandbox provider's signing secret (from the running provider: the database holds it sealed). */
export function providerSecret(t: TestServer): Promise<string> {
  return sandboxProviderSecret(t.running);
}

/** Signs a notification body like the provider does; `at` moves the timestamp (stale tests). */
export async function signedNotification(
  t: TestServer,
  body: Record<string, unknown>,
  options: { secret?: string; at?: Date; id?: string } = {},
): Promise<{ raw: string; headers: Record<string, string> }> {
  const raw = JSON.stringify(body);
  const id = options.id ?? (body.id as string);
  const at = options.at ?? new Date();
  const webhook = new Webhook(options.secret ?? (await providerSecret(t)));
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': webhook.sign(id, at, raw),
    },
  };
}

/** A signed-notification body for a chargeback of the payment (its create or its retrieval shape). */
export function chargebackNotification(payment: Schemas['Payment'] | Schemas['CreatedPayment'], overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const purchase = Array.isArray(payment.transactions) ? payment.transactions[0]! : payment.transactions;
  return {
    id: `ntf_${randomUUID()}`,
    type: 'CHARGEBACK',
    created_at: new Date().toISOString(),
    data: {
      payment_id: payment.id,
      provider_transaction_id: purchase.provider_data.transaction_id,
      amount: payment.amount.value,
      reason: 'REQUESTED_BY_CUSTOMER',
      reason_code: '13.7',
      ...overrides,
    },
  };
}

export function postNotification(t: TestServer, signed: { raw: string; headers: Record<string, string> }, providerId = 'sandbox'): Promise<Response> {
  return t.fetch(`/providers/${providerId}/notifications`, { method: 'POST', headers: signed.headers, body: signed.raw, credentials_: false });
}

export async function getPayment(t: TestServer, id: string, query = ''): Promise<Schemas['Payment']> {
  const res = await t.fetch(`/payments/${id}${query}`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Schemas['Payment'];
}

/**
 * A server NOT in sandbox mode (SANDBOX=false) on a fresh PGlite database, with one organization made
 * through the admin API: for the "404 outside sandbox mode" contract.
 */
export async function startNonSandboxServer(): Promise<{ url: string; creds: Credentials; stop(): Promise<void> }> {
  const db = await leasePglite(async () => new Blob([await readFile(inject('pgliteImage'))]));
  const dataDir = await mkdtemp(join(tmpdir(), 'payorch-nosandbox-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SANDBOX: 'false', ADMIN_API_KEY, PUBLIC_BASE_URL: 'https://pay.example.com',
    VAULT_ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', VALIDATE_RESPONSES: 'true' });
  const running = await startServer({ config, db, log: createLogger('silent') });
  const res = await fetch(`${running.url}/v1/admin/organizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'admin-api-key': ADMIN_API_KEY },
    body: JSON.stringify({ name: 'Live merchant', pci_certified: true }),
  });
  expect(res.status).toBe(201);
  const creds = (await res.json()) as Credentials;
  return {
    url: `${running.url}/v1`,
    creds,
    async stop() {
      await running.close();
      await db.close();
    },
  };
}

/** Enrolls a card for the customer through the vault's API; returns its vaulted_token. */
export async function enrollCard(t: TestServer, customerId: string, number: string = CARDS.approved): Promise<string> {
  const res = await t.fetch(`/customers/${customerId}/payment-methods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
    body: JSON.stringify({
      account_id: t.sandbox.account_id,
      country: 'BR',
      type: 'CARD',
      card_data: { number, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: (new Date().getUTCFullYear() + 3) % 100, security_code: '123' },
    }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return (JSON.parse(text) as { vaulted_token: string }).vaulted_token;
}

/**
 * An authorization only (`payment_method.detail.card.capture: false`): PENDING / AUTHORIZED, nothing
 * captured. Built from paymentBody, so the card's layout is the one createPayment takes.
 */
export async function authorizedPayment(t: TestServer, overrides: Parameters<typeof paymentBody>[2] = {}, customerId?: string): Promise<Schemas['CreatedPayment']> {
  const body = paymentBody(t, customerId ?? (await createCustomer(t)), overrides);
  (body.payment_method.detail!.card as { capture?: boolean }).capture = false;
  const res = await postPayment(t, body);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as Schemas['CreatedPayment'];
}

/** The id of the payment's card transaction (PURCHASE or AUTHORIZE), read back with GET /payments/{id}. */
export async function cardTransactionId(t: TestServer, paymentId: string): Promise<string> {
  const payment = await getPayment(t, paymentId);
  const card = payment.transactions.find((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');
  if (!card) throw new Error(`payment ${paymentId} has no card transaction`);
  return card.id;
}

/**
 * POST a lifecycle operation over raw HTTP with a fresh idempotency key unless given: `capture`,
 * `cancel` and `refund` act on a transaction, `cancel-or-refund` on the payment.
 */
export function postLifecycle(
  t: TestServer,
  paymentId: string,
  operation: 'capture' | 'cancel' | 'refund' | 'cancel-or-refund',
  body: unknown = {},
  init: { transactionId?: string; key?: string } = {},
): Promise<Response> {
  const path = operation === 'cancel-or-refund' ? `/payments/${paymentId}/cancel-or-refund` : `/payments/${paymentId}/transactions/${init.transactionId}/${operation}`;
  return t.fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idempotency-key': init.key ?? randomUUID() },
    body: JSON.stringify(body),
  });
}
