/**
 * What a provider answers is input (issue 21, findings 4 and 5). Through the sandbox acquirers' faults
 * (PUT /_sandbox/faults): an answer of 150 MB, streamed or declared, is cut at 64 KiB as BAD_RESPONSE and the
 * payment fails over to SANDBOX_B; what is stored and shown of it is bounded and redacted; a dripping
 * answer is cut at the connection's timeout. Random 80-character codes, messages and references never
 * reach a response, the database or a metric label as sent: every payment answers 201 in the API's shape,
 * replays and lists answer 200, and the metric series do not grow with the codes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { boundedFetch } from '../src/providers/http/bounded-fetch.js';
import { MAX_PROVIDER_ANSWER_BYTES } from '../src/providers/http/bounded-request.js';
import { ProviderUnavailableError, type ConnectionContext } from '../src/providers/provider.js';
import { MAX_STORED_RAW_ANSWER_BYTES } from '../src/providers/raw-answer.js';
import { providerRegistry } from '../src/providers/registry.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { SANDBOX_A_DEFAULT_CREDENTIALS, SandboxAProvider } from '../src/providers/sandbox/sandbox-a-provider.js';
import { SANDBOX_B_DEFAULT_CREDENTIALS, SandboxBProvider } from '../src/providers/sandbox/sandbox-b-provider.js';
import { SandboxShared } from '../src/providers/sandbox/sandbox-provider.js';
import { setFaults } from './support/acquirers.js';
import { backends, startTestServer, type Credentials, type TestServer } from './support/harness.js';
import { CARDS, createCustomer, paymentBody } from './support/payments.js';
import { findPans } from './support/sensitive-data-scan.js';

type Created = Schemas['CreatedPayment'];
interface Connection {
  connection_id: string;
  provider_id: string;
  name: string;
}

/** The key and the token the odd_values fault mixes into what it sends (kit.ts ODD_EXTRAS), as they would show unredacted. */
const SECRETS_SENT = /sk_live_51HkQeW|eyJhbGciOiJIUzI1NiJ9\.eyJ/;
const METRICS_TOKEN = 'provider-answers-metrics-token-0123456789';
const MB = 1024 * 1024;
const COOL_DOWN_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function faults(url: string, body: unknown | null): Promise<void> {
  const res = await setFaults(url, body);
  expect(res.ok, await res.clone().text()).toBe(true);
}
async function oversizedBytesSent(url: string): Promise<number> {
  return ((await (await fetch(`${url}/_sandbox/faults`)).json()) as { stats: { oversized_bytes_sent: number } }).stats.oversized_bytes_sent;
}
/** Nothing a provider may not put in a stored or shown value: control or invisible characters, a lone surrogate. */
const clean = (s: string) => !/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(s) && (s as string & { isWellFormed(): boolean }).isWellFormed();

describe('the bounded HTTP path and the adapter boundary, provider by provider', () => {
  let acquirers: SandboxAcquirers;
  const conn = (credentials: Record<string, string>, timeoutMs: number): ConnectionContext => ({ connectionId: 'test', credentials, timeoutMs });
  beforeAll(async () => {
    acquirers = await startSandboxAcquirers();
  });
  afterAll(() => acquirers.close());
  afterEach(async () => {
    await faults(acquirers.a.url, null);
    await faults(acquirers.b.url, null);
  });
  const charge = (timeoutMs: number, provider: 'a' | 'b') => ({
    card: { number: CARDS.approved, holderName: 'ANA LIMA', expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' },
    amount: '10.00',
    currency: 'BRL',
    reference: randomUUID(),
    paymentId: randomUUID(),
    description: 'test',
    connection: provider === 'a' ? conn(SANDBOX_A_DEFAULT_CREDENTIALS, timeoutMs) : conn(SANDBOX_B_DEFAULT_CREDENTIALS, timeoutMs),
  });
  const registry = () => {
    const shared = new SandboxShared();
    const a = new SandboxAProvider(shared, { url: acquirers.a.url, defaultConnection: conn(SANDBOX_A_DEFAULT_CREDENTIALS, 10_000) });
    const b = new SandboxBProvider(shared, { url: acquirers.b.url, defaultConnection: conn(SANDBOX_B_DEFAULT_CREDENTIALS, 10_000) });
    return providerRegistry([a, b]);
  };
  const unavailable = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    return err as ProviderUnavailableError;
  };

  it.each([
    ['one byte over 64 KiB, chunked', { bytes: MAX_PROVIDER_ANSWER_BYTES + 1 }],
    ['one byte over 64 KiB, declared', { bytes: MAX_PROVIDER_ANSWER_BYTES + 1, lengthHeader: true }],
    ['150 MB, chunked', { bytes: 150 * MB }],
    ['150 MB, declared', { bytes: 150 * MB, lengthHeader: true }],
  ])('an answer of %s → BAD_RESPONSE (maybe processed); the acquirer could send only a bounded part of it', async (_name, options) => {
    for (const id of ['a', 'b'] as const) {
      const url = acquirers[id].url;
      await faults(url, { failRate: 1, mode: 'oversized', ...options });
      const err = await unavailable(registry().get(id === 'a' ? 'SANDBOX_A' : 'SANDBOX_B')!.purchase(charge(10_000, id)));
      expect(err).toMatchObject({ kind: 'BAD_RESPONSE', maybeProcessed: true });
      // Reading stopped at the limit: what left the acquirer is the limit plus what the socket buffers held.
      expect(await oversizedBytesSent(url)).toBeLessThan(16 * MB);
    }
  });

  it('boundedFetch, the transport an SDK plugs in: an ordinary answer reads as usual; an oversized or dripping one rejects like the adapters\' calls', async () => {
    const f = boundedFetch('SDK_CONNECTOR', 300);
    const ok = await f(`${acquirers.a.url}/_sandbox/faults`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ faults: null });
    const post = () =>
      f(`${acquirers.a.url}/v1/charges`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SANDBOX_A_DEFAULT_CREDENTIALS.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reference: randomUUID(), capture: true, amount: { value: '1.00', currency: 'BRL' }, card: { number: CARDS.approved } }),
      });
    expect((await post()).status).toBe(200);
    await faults(acquirers.a.url, { failRate: 1, mode: 'oversized', bytes: 150 * MB });
    expect(await unavailable(post())).toMatchObject({ kind: 'BAD_RESPONSE', providerId: 'SDK_CONNECTOR' });
    await faults(acquirers.a.url, { failRate: 1, mode: 'drip', intervalMs: 20 });
    expect(await unavailable(post())).toMatchObject({ kind: 'TIMEOUT' });
  });

  it('an answer dripping one byte at a time is cut at the connection timeout (one deadline for headers and body)', async () => {
    await faults(acquirers.a.url, { failRate: 1, mode: 'drip', intervalMs: 20 });
    const err = await unavailable(registry().get('SANDBOX_A')!.purchase(charge(300, 'a')));
    expect(err).toMatchObject({ kind: 'TIMEOUT', maybeProcessed: true });
  });

  it.each(['APPROVED', 'DECLINED', 'ERROR'] as const)('odd values in a %s answer: every value normalized, the raw answer bounded and redacted', async (status) => {
    for (const id of ['a', 'b'] as const) {
      await faults(acquirers[id].url, { failRate: 1, mode: 'odd_values', status, seed: 11 });
      const provider = registry().get(id === 'a' ? 'SANDBOX_A' : 'SANDBOX_B')!;
      const input = charge(10_000, id);
      const r = await provider.purchase(input);
      expect(r.outcome).toBe({ APPROVED: 'SUCCEEDED', DECLINED: 'DECLINED', ERROR: 'ERROR' }[status]);
      expect(r.responseCode).toBe(status === 'APPROVED' && id === 'b' ? 'SUCCEEDED' : id === 'b' && status === 'ERROR' ? 'PROVIDER_ERROR' : id === 'b' ? 'DECLINED' : 'OTHER');
      expect(r.iso8583ResponseCode).toBe('OTHER');
      expect(['OTHER', null]).toContain(r.merchantAdviceCode);
      expect(r.authorizationCode).toBeNull();
      expect(r.retrievalReferenceNumber).toBeNull();
      if (status === 'APPROVED') expect(r.providerTransactionId).toMatch(/^[\x21-\x7e]{1,255}$/);
      else expect(r.providerTransactionId).toBe('');
      for (const text of [r.responseMessage, r.iso8583ResponseMessage, r.merchantAdviceCodeMessage ?? '', r.cardInfo?.issuerName ?? '']) {
        expect(text.length).toBeLessThanOrEqual(255);
        expect(clean(text), JSON.stringify(text)).toBe(true);
      }
      const raw = JSON.stringify(r.rawResponse);
      expect(Buffer.byteLength(raw)).toBeLessThanOrEqual(MAX_STORED_RAW_ANSWER_BYTES);
      expect(findPans(raw), raw).toEqual([]);
      expect(raw).not.toMatch(SECRETS_SENT);
      // A lookup answers the same, normalized the same way.
      const found = await provider.lookup({ reference: input.reference });
      expect(found).toMatchObject({ found: true, result: { outcome: r.outcome, responseCode: r.responseCode } });
      await faults(acquirers[id].url, null);
    }
  });
});

for (const backend of backends()) {
  describe(`provider answers through the service on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    let t: TestServer & { stop(): Promise<void> };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      t = await startTestServer(backend, {
        env: {
          SANDBOX_A_URL: acquirers.a.url,
          SANDBOX_B_URL: acquirers.b.url,
          RECONCILIATION_INTERVAL_MS: '3600000',
          METRICS_TOKEN,
          // A's circuit opens after 5 errors in a row: past a short cool-down each payment probes A again, so
          // every one of them meets A's odd answer.
          CIRCUIT_COOL_DOWN_MS: String(COOL_DOWN_MS),
        },
      });
      t.rememberSecret(METRICS_TOKEN, 'METRICS_TOKEN');
    });
    afterAll(async () => {
      await t?.stop();
      await acquirers?.close();
    });
    afterEach(async () => {
      await faults(acquirers.a.url, null);
    });

    async function merchant() {
      const creds = await t.createOrganization({ pciCertified: true });
      const customerId = await createCustomer(t, t.clientFor(creds));
      const headers = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const connections = (await (await t.fetch('/connections', { headers })).json()) as Connection[];
      const byProvider = (id: string) => connections.find((c) => c.provider_id === id)!;
      return { creds, customerId, headers, a: byProvider('SANDBOX_A'), b: byProvider('SANDBOX_B') };
    }
    type Merchant = Awaited<ReturnType<typeof merchant>>;
    const post = (m: Merchant, body: unknown, key: string) =>
      t.fetch('/payments', { method: 'POST', headers: { ...m.headers, 'content-type': 'application/json', 'x-idempotency-key': key }, body: JSON.stringify(body) });
    async function pay(m: Merchant, overrides: Partial<Schemas['CreatePaymentRequest']> = {}, key = randomUUID()) {
      const body = { ...paymentBody({ ...t, sandbox: m.creds as Credentials }, m.customerId, { card: CARDS.approved }), ...overrides };
      const res = await post(m, body, key);
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return { payment: JSON.parse(text) as Created, body, key, text };
    }
    const attempts = (p: Created) => p.transactions_history!.map((x) => [x.provider_id, x.status]);
    const series = async () =>
      (await (await fetch(`${t.running.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())
        .split('\n')
        .filter((l) => l.startsWith('payorch_'))
        .map((l) => l.slice(0, l.lastIndexOf(' ')));

    it('SANDBOX_A answers 150 MB: cut at 64 KiB as BAD_RESPONSE, the payment fails over to SANDBOX_B within the timeout; stored and shown raw answers are bounded', async () => {
      const m = await merchant();
      await faults(acquirers.a.url, { failRate: 1, mode: 'oversized', bytes: 150 * MB });
      const started = Date.now();
      const { payment } = await pay(m);
      const elapsed = Date.now() - started;
      expect(payment).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      // BAD_RESPONSE may have been processed: A's attempt waits for reconciliation.
      expect(attempts(payment)).toEqual([
        ['SANDBOX_A', 'PENDING'],
        ['SANDBOX_B', 'SUCCEEDED'],
      ]);
      expect(payment.transactions_history![0]).toMatchObject({ response_code: 'PROVIDER_BAD_RESPONSE' });
      // Not minutes: well within the connection's 10 s timeout, and A sent only a bounded part.
      expect(elapsed).toBeLessThan(10_000);
      expect(await oversizedBytesSent(acquirers.a.url)).toBeLessThan(16 * MB);
      await faults(acquirers.a.url, null);

      // A had approved it: reconciliation finds the approval and voids it (the existing late-approval path).
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const read = await t.fetch(`/payments/${payment.id}?raw_response=true`, { headers: m.headers });
      const text = await read.text();
      expect(read.status, text).toBe(200);
      expect(Buffer.byteLength(text)).toBeLessThan(64 * 1024);
      const shown = JSON.parse(text) as Schemas['Payment'];
      expect(shown.transactions.map((x) => [x.provider_id, x.status, x.reason])).toEqual([
        ['SANDBOX_A', 'CANCELED', 'LATE_APPROVAL_REVERSED'],
        ['SANDBOX_B', 'SUCCEEDED', null],
      ]);
      for (const x of shown.transactions) expect(Buffer.byteLength(JSON.stringify(x.provider_data.raw_response))).toBeLessThanOrEqual(MAX_STORED_RAW_ANSWER_BYTES);
      const stored = await t.db.query<{ size: number | null }>('SELECT octet_length(raw_response::text) AS size FROM payment_transactions WHERE payment_id = $1', [payment.id]);
      expect(stored.length).toBe(2);
      for (const row of stored) expect(Number(row.size ?? 0)).toBeLessThanOrEqual(MAX_STORED_RAW_ANSWER_BYTES);
    });

    it('SANDBOX_A answers ERROR with random 80-character codes: every payment 201 through SANDBOX_B, replays and lists 200, no new metric series', async () => {
      const m = await merchant();
      await faults(acquirers.a.url, { failRate: 1, mode: 'odd_values', status: 'ERROR', length: 80, seed: 5 });
      const made: Awaited<ReturnType<typeof pay>>[] = [];
      // The first payments create the series a failover makes (A → B, its reason, the calls' outcomes).
      const payAfterCoolDown = async () => {
        await sleep(COOL_DOWN_MS + 50);
        made.push(await pay(m));
      };
      for (let i = 0; i < 3; i++) await payAfterCoolDown();
      await series(); // the scrape's own series
      const before = await series();
      for (let i = 0; i < 9; i++) await payAfterCoolDown();
      const after = await series();
      expect(after.filter((s) => !before.includes(s))).toEqual([]);
      expect(after.some((s) => s.startsWith('payorch_failovers_total{') && s.includes('reason="OTHER"'))).toBe(true);

      for (const { payment, body, key, text } of made) {
        expect(payment).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
        expect(attempts(payment)).toEqual([
          ['SANDBOX_A', 'ERROR'],
          ['SANDBOX_B', 'SUCCEEDED'],
        ]);
        const atA = payment.transactions_history![0]!;
        expect(atA.response_code).toBe('OTHER');
        expect(atA.provider_data).toMatchObject({ iso8583_response_code: 'OTHER', transaction_id: '' });
        expect(clean(atA.response_message ?? '')).toBe(true);
        expect(findPans(text), text).toEqual([]);
        // The same key replays the same answer.
        const again = await post(m, body, key);
        expect(again.status).toBe(201);
        expect(((await again.json()) as Created).id).toBe(payment.id);
      }
      const byOrder = await t.fetch(`/payments?merchant_order_id=${encodeURIComponent(made[0]!.body.merchant_order_id!)}`, { headers: m.headers });
      expect(byOrder.status, await byOrder.clone().text()).toBe(200);
      const byCustomer = await t.fetch(`/payments?customer_id=${m.customerId}&limit=100`, { headers: m.headers });
      expect(byCustomer.status, await byCustomer.clone().text()).toBe(200);
      expect(((await byCustomer.json()) as { payments: unknown[] }).payments).toHaveLength(made.length);
      const raw = await t.fetch(`/payments/${made[0]!.payment.id}?raw_response=true`, { headers: m.headers });
      const rawText = await raw.text();
      expect(raw.status, rawText).toBe(200);
      expect(rawText).not.toMatch(SECRETS_SENT);
    });

    it('SANDBOX_A approves with odd codes and references: the payment succeeds there, every value in the API shape', async () => {
      const m = await merchant();
      await faults(acquirers.a.url, { failRate: 1, mode: 'odd_values', status: 'APPROVED', length: 200, seed: 9 });
      const { payment, text } = await pay(m);
      expect(payment).toMatchObject({ status: 'SUCCEEDED' });
      expect(attempts(payment)).toEqual([['SANDBOX_A', 'SUCCEEDED']]);
      expect(findPans(text)).toEqual([]);
      const read = await t.fetch(`/payments/${payment.id}?raw_response=true`, { headers: m.headers });
      expect(read.status, await read.clone().text()).toBe(200);
    });
  });
}
