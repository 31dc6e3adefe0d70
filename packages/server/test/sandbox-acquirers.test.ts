/**
 * The two sandbox acquirers over HTTP, through their adapters: the test-card tables, idempotency by
 * reference, lookups and tombstones, the late approval of …0085, faults mapped to unavailable kinds,
 * credentials refused, and the standalone entry. No database: these acquirers keep their ledgers in memory
 * (the database store the service gives them is sandbox-restart.test.ts's).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findPans } from './support/sensitive-data-scan.js';
import { ProviderUnavailableError, type ConnectionContext, type PaymentProvider, type ProviderCard } from '../src/providers/provider.js';
import { CARDS_B } from '../src/providers/sandbox/acquirer-b/server.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { SANDBOX_A_DEFAULT_CREDENTIALS, SandboxAProvider } from '../src/providers/sandbox/sandbox-a-provider.js';
import { SANDBOX_B_DEFAULT_CREDENTIALS, SandboxBProvider } from '../src/providers/sandbox/sandbox-b-provider.js';
import { PROVIDER_AUTHENTICATION_FAILED, SandboxShared } from '../src/providers/sandbox/sandbox-provider.js';
import { TEST_CARDS } from '../src/providers/sandbox/test-cards.js';

let acquirers: SandboxAcquirers;
let a: SandboxAProvider;
let b: SandboxBProvider;
const conn = (credentials: Record<string, string>, timeoutMs = 10_000): ConnectionContext => ({ connectionId: 'test', credentials, timeoutMs });
const aConn = (timeoutMs?: number) => conn(SANDBOX_A_DEFAULT_CREDENTIALS, timeoutMs);
const bConn = (timeoutMs?: number) => conn(SANDBOX_B_DEFAULT_CREDENTIALS, timeoutMs);

beforeAll(async () => {
  acquirers = await startSandboxAcquirers();
  const shared = new SandboxShared({ sandboxMode: true });
  a = new SandboxAProvider(shared, { url: acquirers.a.url, defaultConnection: aConn() });
  b = new SandboxBProvider(shared, { url: acquirers.b.url, defaultConnection: bConn() });
});
afterAll(() => acquirers.close());
afterEach(async () => {
  for (const url of [acquirers.a.url, acquirers.b.url]) await fetch(`${url}/_sandbox/faults`, { method: 'DELETE' });
});

const card = (number: string): ProviderCard => ({ number, holderName: 'ANA LIMA', expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: number.startsWith('5') ? 'MASTERCARD' : 'VISA' });
const charge = (number: string, extra: { reference?: string; amount?: string; timeoutMs?: number; connection?: ConnectionContext } = {}) => ({
  card: card(number),
  amount: extra.amount ?? '150.50',
  currency: 'BRL',
  reference: extra.reference ?? randomUUID(),
  paymentId: randomUUID(),
  description: 'test',
  connection: extra.connection,
});

async function ledger(url: string): Promise<{ reference: string; kind: string; status: string; amount: { value: string } }[]> {
  const res = await fetch(`${url}/_sandbox/ledger`);
  return ((await res.json()) as { operations: never[] }).operations;
}
async function faults(url: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}
async function unavailable(call: Promise<unknown>): Promise<ProviderUnavailableError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderUnavailableError);
  return err as ProviderUnavailableError;
}

describe('SANDBOX_A over HTTP: the test-card table', () => {
  const cards = Object.entries(TEST_CARDS).filter(([pan]) => pan !== '4507990000000085');
  it.each([...cards, ['4111111111111111', TEST_CARDS['4507990000000002']!] as const])('%s', async (pan, expected) => {
    const input = charge(pan);
    const r = await a.purchase(input);
    expect(r).toMatchObject({ outcome: expected.outcome, responseCode: expected.responseCode, iso8583ResponseCode: expected.iso8583[0], merchantAdviceCode: expected.merchantAdvice?.[0] ?? null });
    expect(r.rawResponse).toMatchObject({ reference: input.reference, status: { SUCCEEDED: 'APPROVED', DECLINED: 'DECLINED', ERROR: 'ERROR' }[expected.outcome] });
    expect(JSON.stringify(r.rawResponse)).not.toContain(pan);
    expect(r.chargebackFollows).toBe(expected.chargebackFollows ?? false);
  });

  it('capture and refund refusals of …0101 and …0093; a void releases an authorization', async () => {
    const auth = await a.authorize(charge('4507990000000101'));
    expect((await a.capture({ providerTransactionId: auth.providerTransactionId, amount: '150.50', currency: 'BRL', reference: randomUUID() })).responseCode).toBe('CAPTURE_DECLINED');
    const bought = await a.purchase(charge('4507990000000093'));
    expect((await a.refund({ providerTransactionId: bought.providerTransactionId, amount: '10', currency: 'BRL', reference: randomUUID() })).responseCode).toBe('REFUND_DECLINED');
    const held = await a.authorize(charge('4507990000000002'));
    const voided = await a.void({ providerTransactionId: held.providerTransactionId, amount: '150.50', currency: 'BRL', reference: randomUUID() });
    expect(voided.outcome).toBe('SUCCEEDED');
    expect(await a.lookup({ reference: String(held.rawResponse.reference) })).toMatchObject({ found: true, voided: true });
  });
});

describe('SANDBOX_B over HTTP: its own protocol and table', () => {
  const expectations: [string, 'SUCCEEDED' | 'DECLINED', string][] = [
    ['4507990000000002', 'SUCCEEDED', 'SUCCEEDED'],
    ['4507990000000077', 'SUCCEEDED', 'SUCCEEDED'],
    ['4507990000000085', 'SUCCEEDED', 'SUCCEEDED'],
    ['4507990000000036', 'SUCCEEDED', 'SUCCEEDED'],
    ['4507990000000010', 'DECLINED', 'INSUFFICIENT_FUNDS'],
    ['4507990000000028', 'DECLINED', 'DECLINED_BY_BANK'],
    ['4507990000000044', 'DECLINED', 'INVALID_SECURITY_CODE'],
    ['4507990000000051', 'DECLINED', 'INVALID_CARD_DATA'],
    ['4507990000000069', 'DECLINED', 'REPORTED_STOLEN'],
    ['4000000000000002', 'DECLINED', 'DECLINED_BY_BANK'],
  ];
  it('covers every card of its table', () => {
    expect(Object.keys(CARDS_B).every((pan) => expectations.some(([p]) => p === pan))).toBe(true);
  });
  it.each(expectations)('%s → %s %s', async (pan, outcome, responseCode) => {
    const input = charge(pan);
    const r = await b.purchase(input);
    expect(r).toMatchObject({ outcome, responseCode });
    expect(r.rawResponse).toMatchObject({ merchantReference: input.reference, resultCode: outcome === 'SUCCEEDED' ? 'AUTHORISED' : 'REFUSED', amount: { minor: 15050, currency: 'BRL' } });
    expect(JSON.stringify(r.rawResponse)).not.toContain(pan);
  });
  it('authorize, capture, refund; a void of a purchase reverses it', async () => {
    const auth = await b.authorize(charge('4507990000000002'));
    const captured = await b.capture({ providerTransactionId: auth.providerTransactionId, amount: '100', currency: 'BRL', reference: randomUUID() });
    expect(captured.outcome).toBe('SUCCEEDED');
    expect((await b.refund({ providerTransactionId: auth.providerTransactionId, amount: '10.25', currency: 'BRL', reference: randomUUID() })).outcome).toBe('SUCCEEDED');
    const bought = charge('4507990000000002');
    const p = await b.purchase(bought);
    expect((await b.void({ providerTransactionId: p.providerTransactionId, amount: '150.50', currency: 'BRL', reference: randomUUID() })).outcome).toBe('SUCCEEDED');
    expect(await b.lookup({ reference: bought.reference })).toMatchObject({ found: true, voided: true, result: { outcome: 'SUCCEEDED' } });
    expect((await ledger(acquirers.b.url)).find((e) => e.reference === bought.reference)).toMatchObject({ kind: 'PURCHASE', status: 'VOIDED', amount: { value: '15050' } });
  });
});

describe.each([
  ['SANDBOX_A', () => a, () => acquirers.a.url],
  ['SANDBOX_B', () => b, () => acquirers.b.url],
] as const)('%s: idempotency, lookups, faults, credentials', (_id, provider: () => PaymentProvider, url: () => string) => {
  it('the same reference twice: the first answer, one ledger entry', async () => {
    const input = charge('4507990000000002');
    const first = await provider().purchase(input);
    const again = await provider().purchase({ ...input, amount: '999' });
    expect(again.providerTransactionId).toBe(first.providerTransactionId);
    expect(again.rawResponse).toEqual(first.rawResponse);
    expect((await ledger(url())).filter((e) => e.reference === input.reference)).toHaveLength(1);
  });

  it('lookup: found, not found, and a not-found reference is refused when it arrives late', async () => {
    const input = charge('4507990000000010');
    const declined = await provider().purchase(input);
    expect(await provider().lookup({ reference: input.reference })).toEqual({ found: true, voided: false, result: declined });
    const never = randomUUID();
    expect(await provider().lookup({ reference: never })).toEqual({ found: false });
    const late = await provider().purchase(charge('4507990000000002', { reference: never }));
    expect(late).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REFERENCE_CLOSED' });
    expect(await provider().lookup({ reference: never })).toEqual({ found: false });
    expect((await ledger(url())).some((e) => e.reference === never)).toBe(false);
  });

  it.each([
    ['error', 'BAD_RESPONSE', false],
    ['silent', 'TIMEOUT', true],
    ['refuse', 'CONNECTION_CUT', false],
  ] as const)("fault mode '%s' → %s (recorded: %s)", async (mode, kind, recorded) => {
    await faults(url(), { failRate: 1, mode, seed: 7 });
    const input = charge('4507990000000002', { connection: provider() === a ? aConn(300) : bConn(300) });
    const err = await unavailable(provider().purchase(input));
    expect(err).toMatchObject({ kind, maybeProcessed: true, providerId: provider().id });
    await fetch(`${url()}/_sandbox/faults`, { method: 'DELETE' });
    const found = await provider().lookup({ reference: input.reference });
    expect(found.found).toBe(recorded);
    if (found.found) expect(found.result.outcome).toBe('SUCCEEDED');
  });

  it('a wrong credential → ERROR PROVIDER_AUTHENTICATION_FAILED, nothing recorded', async () => {
    const input = charge('4507990000000002', { connection: conn({ api_key: 'live_key', merchant_account: 'x', password: 'short' }) });
    const r = await provider().purchase(input);
    expect(r).toMatchObject({ outcome: 'ERROR', responseCode: PROVIDER_AUTHENTICATION_FAILED });
    expect((await ledger(url())).some((e) => e.reference === input.reference)).toBe(false);
  });

  it('nobody listening → NOT_SENT (certainly not processed)', async () => {
    const port = await freePort();
    const Adapter = provider() === a ? SandboxAProvider : SandboxBProvider;
    const closed = new Adapter(new SandboxShared(), { url: `http://127.0.0.1:${port}`, defaultConnection: provider() === a ? aConn() : bConn() });
    expect(await unavailable(closed.purchase(charge('4507990000000002')))).toMatchObject({ kind: 'NOT_SENT', maybeProcessed: false });
  });
});

describe('SANDBOX_A: the late approval of 4507990000000085', () => {
  it('times out at a 300 ms connection timeout; lookup shows it approved; a void makes it VOIDED', async () => {
    const input = charge('4507990000000085', { connection: aConn(300) });
    expect(await unavailable(a.purchase(input))).toMatchObject({ kind: 'TIMEOUT', maybeProcessed: true });
    const found = await a.lookup({ reference: input.reference });
    expect(found).toMatchObject({ found: true, voided: false, result: { outcome: 'SUCCEEDED' } });
    if (!found.found) throw new Error('unreachable');
    const voided = await a.void({ providerTransactionId: found.result.providerTransactionId, amount: input.amount, currency: input.currency, reference: randomUUID() });
    expect(voided.outcome).toBe('SUCCEEDED');
    expect(await a.lookup({ reference: input.reference })).toMatchObject({ found: true, voided: true });
    expect((await ledger(acquirers.a.url)).find((e) => e.reference === input.reference)).toMatchObject({ kind: 'PURCHASE', status: 'VOIDED' });
  });
});

describe('the control surface', () => {
  it('refuses invalid faults; the ledger never shows a PAN', async () => {
    const res = await fetch(`${acquirers.a.url}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ failRate: 2, mode: 'error' }) });
    expect(res.status).toBe(400);
    await a.purchase(charge('4507990000000002'));
    // A card number is Luhn-valid with a card prefix; random hex ids may hold long runs of digits and are not one.
    const text = JSON.stringify(await ledger(acquirers.a.url));
    expect(text).not.toContain('4507990000000002');
    expect(findPans(text)).toEqual([]);
  });
});

describe('the standalone entry (acquirers-main)', () => {
  const entry = fileURLToPath(new URL('../dist/providers/sandbox/acquirers-main.js', import.meta.url));
  it.skipIf(!existsSync(entry))('prints both URLs on one JSON line and serves them', async () => {
    const child = spawn(process.execPath, [entry], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.once('exit', (code) => reject(new Error(`acquirers-main exited with ${code}`)));
      });
      const urls = JSON.parse(line) as { SANDBOX_A_URL: string; SANDBOX_B_URL: string };
      const remoteA = new SandboxAProvider(new SandboxShared(), { url: urls.SANDBOX_A_URL, defaultConnection: aConn() });
      const remoteB = new SandboxBProvider(new SandboxShared(), { url: urls.SANDBOX_B_URL, defaultConnection: bConn() });
      expect((await remoteA.purchase(charge('4507990000000002'))).outcome).toBe('SUCCEEDED');
      expect((await remoteB.purchase(charge('4507990000000077'))).outcome).toBe('SUCCEEDED');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
