/**
 * Payments through routing and the two sandbox acquirers over HTTP (issue 16 §1–3), on each backend: the
 * three failover test cards, routing by condition, the circuit breaker, and the reconciliation of a late
 * approval. The acquirers run in this process (their ledgers are read through /_sandbox/ledger); each
 * scenario uses its own organization, so connections and circuits do not meet.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { backends, startTestServer, type Credentials, type TestServer } from './support/harness.js';
import { CARDS, createCustomer, paymentBody } from './support/payments.js';

type Created = Schemas['CreatedPayment'];
interface Connection {
  connection_id: string;
  provider_id: string;
  name: string;
  timeout_ms: number;
}
interface LedgerEntry {
  reference: string;
  payment_id: string | null;
  kind: string;
  status: string;
}

const COOL_DOWN_MS = 1_500;
const METRICS_TOKEN = 'orchestration-metrics-token-0123456789';

for (const backend of backends()) {
  describe(`orchestration on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    let t: TestServer & { stop(): Promise<void> };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      t = await startTestServer(backend, {
        env: {
          SANDBOX_A_URL: acquirers.a.url,
          SANDBOX_B_URL: acquirers.b.url,
          CIRCUIT_COOL_DOWN_MS: String(COOL_DOWN_MS),
          // The worker's own passes stay out of the way: the tests run them (runOnce).
          RECONCILIATION_INTERVAL_MS: '3600000',
          METRICS_TOKEN,
        },
      });
      t.rememberSecret(METRICS_TOKEN, 'METRICS_TOKEN');
    });
    afterAll(async () => {
      await t?.stop();
      await acquirers?.close();
    });

    /** An organization of its own: connections to A and B, the default CARD routing A then B, a customer. */
    async function merchant() {
      const creds = await t.createOrganization({ pciCertified: true });
      const client = t.clientFor(creds);
      const customerId = await createCustomer(t, client);
      const headers = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const list = await t.fetch('/connections', { headers });
      expect(list.status).toBe(200);
      const connections = (await list.json()) as Connection[];
      const byProvider = (id: string) => connections.find((c) => c.provider_id === id)!;
      return { creds, customerId, headers, a: byProvider('SANDBOX_A'), b: byProvider('SANDBOX_B') };
    }
    type Merchant = Awaited<ReturnType<typeof merchant>>;

    async function pay(m: Merchant, card: string, overrides: Partial<Schemas['CreatePaymentRequest']> = {}): Promise<Created> {
      const body = { ...paymentBody({ ...t, sandbox: m.creds as Credentials }, m.customerId, { card }), ...overrides };
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: { ...m.headers, 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return JSON.parse(text) as Created;
    }

    const patchConnection = async (m: Merchant, connectionId: string, body: unknown) => {
      const res = await t.fetch(`/connections/${connectionId}`, { method: 'PATCH', headers: { ...m.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const ledger = async (url: string): Promise<LedgerEntry[]> => ((await (await fetch(`${url}/_sandbox/ledger`)).json()) as { operations: LedgerEntry[] }).operations;
    const faults = async (url: string, body: unknown | null) => {
      const res = await fetch(`${url}/_sandbox/faults`, body === null ? { method: 'DELETE' } : { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.ok).toBe(true);
    };
    const getPayment = async (m: Merchant, id: string): Promise<Schemas['Payment']> => (await (await t.fetch(`/payments/${id}`, { headers: m.headers })).json()) as Schemas['Payment'];
    const reconcile = () => t.running.deps.services.orchestration.reconciliation.runOnce();
    const attempts = (p: Created) => p.transactions_history!.map((x) => [x.provider_id, x.connection_data.id, x.status]);

    it('4507990000000077: SANDBOX_A answers a provider error, SANDBOX_B approves → SUCCEEDED with two attempts, each naming its provider and connection', async () => {
      const m = await merchant();
      const p = await pay(m, CARDS.providerError);
      expect(p, JSON.stringify(p.transactions_history?.map((x) => [x.provider_id, x.status, x.response_code, x.response_message]))).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(attempts(p)).toEqual([
        ['SANDBOX_A', m.a.connection_id, 'ERROR'],
        ['SANDBOX_B', m.b.connection_id, 'SUCCEEDED'],
      ]);
      expect(p.transactions).toMatchObject({ provider_id: 'SANDBOX_B', status: 'SUCCEEDED', connection_data: { id: m.b.connection_id, name: m.b.name } });
      expect(p.transactions_history![0]).toMatchObject({ response_code: 'PROVIDER_ERROR', type: 'PURCHASE' });
      expect(p.routing_rules).toMatchObject({ monitors: true, condition: { id: 0 } });
      expect((p.routing_rules as { routing_id?: string }).routing_id).toMatch(/^r_/);
      // Each attempt went to its acquirer under its own reference.
      expect((await ledger(acquirers.a.url)).find((e) => e.reference === p.transactions_history![0]!.id)).toMatchObject({ status: 'ERROR' });
      expect((await ledger(acquirers.b.url)).find((e) => e.reference === p.transactions.id)).toMatchObject({ status: 'APPROVED' });
      const read = await getPayment(m, p.id);
      expect(read.transactions.map((x) => x.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
      // What operators see: each call by connection and outcome, the move from A to B, both circuits closed.
      const scraped = (await (await fetch(`${t.running.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()).split('\n');
      for (const line of [
        `payorch_provider_calls_total{provider="SANDBOX_A",connection="${m.a.connection_id}",operation="purchase",outcome="ERROR"} 1`,
        `payorch_provider_calls_total{provider="SANDBOX_B",connection="${m.b.connection_id}",operation="purchase",outcome="SUCCEEDED"} 1`,
        `payorch_circuit_state{provider="SANDBOX_A",connection="${m.a.connection_id}"} 0`,
      ]) {
        expect(scraped).toContain(line);
      }
      expect(scraped.some((l) => l.startsWith('payorch_failovers_total{from="SANDBOX_A",to="SANDBOX_B",reason="PROVIDER_ERROR"}'))).toBe(true);
    });

    it('4507990000000010: insufficient funds at SANDBOX_A → DECLINED with one attempt; SANDBOX_B is never asked', async () => {
      const m = await merchant();
      const p = await pay(m, CARDS.insufficientFunds);
      expect(p).toMatchObject({ status: 'DECLINED', sub_status: 'DECLINED' });
      expect(attempts(p)).toEqual([['SANDBOX_A', m.a.connection_id, 'DECLINED']]);
      expect((await ledger(acquirers.b.url)).filter((e) => e.payment_id === p.id)).toEqual([]);
    });

    it('4507990000000085: SANDBOX_A does not answer within the connection timeout, SANDBOX_B approves; reconciliation voids the late approval at A', async () => {
      const m = await merchant();
      await patchConnection(m, m.a.connection_id, { timeout_ms: 300 });
      const p = await pay(m, '4507990000000085');
      expect(p).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(attempts(p)).toEqual([
        ['SANDBOX_A', m.a.connection_id, 'PENDING'],
        ['SANDBOX_B', m.b.connection_id, 'SUCCEEDED'],
      ]);
      const aAttempt = p.transactions_history![0]!.id;
      expect((await ledger(acquirers.a.url)).find((e) => e.reference === aAttempt)).toMatchObject({ status: 'APPROVED' });

      await reconcile();
      const read = await getPayment(m, p.id);
      expect(read).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(read.transactions.map((x) => [x.provider_id, x.status, x.reason])).toEqual([
        ['SANDBOX_A', 'CANCELED', 'LATE_APPROVAL_REVERSED'],
        ['SANDBOX_B', 'SUCCEEDED', null],
      ]);
      // Never charged at A in the end: its ledger shows the approval voided.
      expect((await ledger(acquirers.a.url)).find((e) => e.reference === aAttempt)).toMatchObject({ kind: 'PURCHASE', status: 'VOIDED' });
      expect((await reconcile()).settled).toBe(0);
    });

    it('routing by condition: a CURRENCY condition sends USD payments to SANDBOX_B first; routing_rules names the condition set', async () => {
      const m = await merchant();
      const list = await t.fetch(`/routing?account_id=${m.creds.account_id}&payment_method=CARD`, { headers: m.headers });
      const [routing] = (await list.json()) as { id: string }[];
      const patched = await t.fetch(`/routing/${routing!.id}`, {
        method: 'PATCH',
        headers: { ...m.headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          condition_sets: [
            {
              sort_number: 1,
              name: 'Dollars through B',
              conditions: [{ type: 'CURRENCY', operator: 'IN', values: ['USD'] }],
              route: { steps: [{ index: 1, provider_id: 'SANDBOX_B', connection_id: m.b.connection_id }, { index: 2, provider_id: 'SANDBOX_A', connection_id: m.a.connection_id }] },
            },
          ],
        }),
      });
      expect(patched.status, await patched.clone().text()).toBe(200);
      const usd = await pay(m, CARDS.approved, { amount: { currency: 'USD', value: 20 } });
      expect(attempts(usd)).toEqual([['SANDBOX_B', m.b.connection_id, 'SUCCEEDED']]);
      expect(usd.routing_rules.condition).toMatchObject({ id: 1, name: 'Dollars through B' });
      const brl = await pay(m, CARDS.approved);
      expect(attempts(brl)).toEqual([['SANDBOX_A', m.a.connection_id, 'SUCCEEDED']]);
      expect(brl.routing_rules.condition).toMatchObject({ id: 0 });
    });

    it('circuit breaker: SANDBOX_A silent costs one timeout; the next payments skip it; after the cool-down one probe goes to A', async () => {
      const m = await merchant();
      await patchConnection(m, m.a.connection_id, { timeout_ms: 200 });
      await faults(acquirers.a.url, { failRate: 1, mode: 'silent' });
      try {
        const first = await pay(m, CARDS.approved);
        expect(attempts(first)).toEqual([
          ['SANDBOX_A', m.a.connection_id, 'PENDING'],
          ['SANDBOX_B', m.b.connection_id, 'SUCCEEDED'],
        ]);
        const atA = (await ledger(acquirers.a.url)).length;
        for (let i = 0; i < 3; i++) {
          const skipped = await pay(m, CARDS.approved);
          expect(attempts(skipped)).toEqual([['SANDBOX_B', m.b.connection_id, 'SUCCEEDED']]);
        }
        expect((await ledger(acquirers.a.url)).length).toBe(atA); // A was not called at all

        // After the cool-down one payment probes A (still silent: it fails over, A opens again)...
        await new Promise((r) => setTimeout(r, COOL_DOWN_MS + 100));
        const probe = await pay(m, CARDS.approved);
        expect(attempts(probe).map(([provider]) => provider)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
        expect(attempts(await pay(m, CARDS.approved)).map(([provider]) => provider)).toEqual(['SANDBOX_B']);

        // ...and once A answers again, the next probe closes the circuit. A's timeout goes back to a
        // roomy one: on a loaded machine a 200 ms budget could time out a healthy call and reopen it.
        await faults(acquirers.a.url, null);
        await patchConnection(m, m.a.connection_id, { timeout_ms: 10_000 });
        await new Promise((r) => setTimeout(r, COOL_DOWN_MS + 100));
        expect(attempts(await pay(m, CARDS.approved))).toEqual([['SANDBOX_A', m.a.connection_id, 'SUCCEEDED']]);
        expect(attempts(await pay(m, CARDS.approved))).toEqual([['SANDBOX_A', m.a.connection_id, 'SUCCEEDED']]);
      } finally {
        await faults(acquirers.a.url, null);
      }
      // The silent calls were processed at A: reconciliation voids those approvals (their payments went through B).
      await t.running.deps.services.orchestration.reconciliation.drain();
      const open = await t.db.query("SELECT 1 FROM payment_transactions WHERE status = 'PENDING' AND type IN ('PURCHASE', 'AUTHORIZE')");
      expect(open).toEqual([]);
    });

    /** An approved card paid while both acquirers fail every call in this mode. */
    async function payWithBothFaulted(m: Merchant, mode: 'silent' | 'error'): Promise<Created> {
      await faults(acquirers.a.url, { failRate: 1, mode });
      await faults(acquirers.b.url, { failRate: 1, mode });
      try {
        return await pay(m, CARDS.approved);
      } finally {
        await faults(acquirers.a.url, null);
        await faults(acquirers.b.url, null);
      }
    }

    it('both acquirers silent: the payment waits PENDING / IN_PROCESS; reconciliation takes the first approval and voids the other', async () => {
      const m = await merchant();
      await patchConnection(m, m.a.connection_id, { timeout_ms: 200 });
      await patchConnection(m, m.b.connection_id, { timeout_ms: 200 });
      const p = await payWithBothFaulted(m, 'silent');
      // Both calls may have charged the card: nothing is decided until the providers are asked.
      expect(p).toMatchObject({ status: 'PENDING', sub_status: 'IN_PROCESS' });
      expect(attempts(p)).toEqual([
        ['SANDBOX_A', m.a.connection_id, 'PENDING'],
        ['SANDBOX_B', m.b.connection_id, 'PENDING'],
      ]);
      await t.running.deps.services.orchestration.reconciliation.drain();
      const read = await getPayment(m, p.id);
      expect(read).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { captured: 150.5 } });
      expect(read.transactions.map((x) => [x.provider_id, x.status, x.reason])).toEqual([
        ['SANDBOX_A', 'SUCCEEDED', null],
        ['SANDBOX_B', 'CANCELED', 'LATE_APPROVAL_REVERSED'],
      ]);
      expect((await ledger(acquirers.a.url)).find((e) => e.reference === read.transactions[0]!.id)).toMatchObject({ status: 'APPROVED' });
      expect((await ledger(acquirers.b.url)).find((e) => e.reference === read.transactions[1]!.id)).toMatchObject({ status: 'VOIDED' });
    });

    /** The payment's events, oldest first: [type, the payment's status in it]. */
    const eventsOf = async (paymentId: string) =>
      (await t.db.query<{ type: string; status: string }>("SELECT type, data->'payment'->>'status' AS status FROM webhook_events WHERE resource_id = $1 ORDER BY seq", [paymentId])).map((e) => [e.type, e.status]);

    it('both acquirers answer 500 (nothing processed): PENDING / IN_PROCESS, then reconciliation finds nothing and the payment ends ERROR with one payment.failed', async () => {
      const m = await merchant();
      const p = await payWithBothFaulted(m, 'error');
      expect(p).toMatchObject({ status: 'PENDING', sub_status: 'IN_PROCESS' });
      expect(await eventsOf(p.id)).toEqual([]);
      await t.running.deps.services.orchestration.reconciliation.drain();
      const read = await getPayment(m, p.id);
      expect(read).toMatchObject({ status: 'ERROR', sub_status: 'ERROR' });
      expect(read.transactions.map((x) => [x.provider_id, x.status, x.response_code])).toEqual([
        ['SANDBOX_A', 'ERROR', 'NOT_PROCESSED'],
        ['SANDBOX_B', 'ERROR', 'NOT_PROCESSED'],
      ]);
      // The merchant was told 201 PENDING: the end reaches it as an event (and a webhook), once.
      expect(await eventsOf(p.id)).toEqual([['payment.failed', 'ERROR']]);
      await t.running.deps.services.orchestration.reconciliation.drain();
      expect(await eventsOf(p.id)).toEqual([['payment.failed', 'ERROR']]);
      const listed = await t.fetch('/events?type=payment.failed&limit=100', { headers: m.headers });
      const body = (await listed.json()) as Schemas['EventList'];
      expect(body.events.filter((e) => e.type_event === 'payment.failed' && e.data.payment.id === p.id)).toHaveLength(1);
    });

    it('4507990000000077 with SANDBOX_A the only step: ERROR at once, announced as payment.failed; a decline stays payment.declined', async () => {
      const m = await merchant();
      // Through the default routing (A then B) 0077 succeeds at B: one event, payment.succeeded.
      const viaB = await pay(m, CARDS.providerError);
      expect(viaB).toMatchObject({ status: 'SUCCEEDED' });
      expect(await eventsOf(viaB.id)).toEqual([['payment.succeeded', 'SUCCEEDED']]);
      await patchConnection(m, m.b.connection_id, { enabled: false });
      const alone = await pay(m, CARDS.providerError);
      expect(alone).toMatchObject({ status: 'ERROR', sub_status: 'ERROR' });
      expect(await eventsOf(alone.id)).toEqual([['payment.failed', 'ERROR']]);
      const declined = await pay(m, CARDS.insufficientFunds);
      expect(declined).toMatchObject({ status: 'DECLINED' });
      expect(await eventsOf(declined.id)).toEqual([['payment.declined', 'DECLINED']]);
    });

    it('every step disabled: 422 NO_ROUTE, and nothing is created', async () => {
      const m = await merchant();
      await patchConnection(m, m.a.connection_id, { enabled: false });
      await patchConnection(m, m.b.connection_id, { enabled: false });
      const body = paymentBody({ ...t, sandbox: m.creds as Credentials }, m.customerId, { card: CARDS.approved });
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: { ...m.headers, 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { code: string }).code).toBe('NO_ROUTE');
      expect(await t.db.query('SELECT 1 FROM payments WHERE merchant_order_id = $1', [body.merchant_order_id])).toEqual([]);
    });
  });
}
