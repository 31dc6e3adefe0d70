/**
 * POST /v1/provider-notifications/{connection_id} with the sandbox acquirers as the provider (their
 * parseConnectionNotification: Standard Webhooks with the sandbox's secret), on both backends: each event
 * kind changes the payment and tells the merchant; a bad, missing or stale signature and an unknown
 * connection are 401 and change nothing; re-deliveries and out-of-order deliveries change nothing twice;
 * unknown types are acknowledged; the body is bounded; another organization's payment is out of reach.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, createPayment, evidence, getPayment, paymentBody, postDispute, postLifecycle, postPayment } from './support/payments.js';
import { connectionOf, postConnectionNotification, sandboxNotification, type Signed } from './support/provider-notifications.js';

type Payment = Schemas['Payment'];

async function ok(res: Response, status = 200): Promise<Payment> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Payment;
}

/** What any change would touch: rows of every table an event writes, and the newest update. */
async function footprint(t: TestServer): Promise<Record<string, unknown>> {
  const rows = await t.db.query<Record<string, unknown>>(
    `SELECT (SELECT count(*)::int FROM payment_transactions) AS transactions, (SELECT count(*)::int FROM payment_history) AS history,
            (SELECT count(*)::int FROM webhook_events) AS events, (SELECT count(*)::int FROM disputes) AS disputes,
            (SELECT count(*)::int FROM connection_notifications) AS notifications,
            (SELECT max(updated_at)::text FROM payments) AS payment_updated, (SELECT max(updated_at)::text FROM payment_transactions) AS transaction_updated`,
  );
  return rows[0]!;
}

async function eventsOf(t: TestServer, paymentId: string): Promise<string[]> {
  const rows = await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [paymentId]);
  return rows.map((r) => r.type);
}

async function notificationState(t: TestServer, connectionId: string, notificationId: string): Promise<string | undefined> {
  const rows = await t.db.query<{ state: string }>('SELECT state FROM connection_notifications WHERE connection_id = $1 AND notification_id = $2', [connectionId, notificationId]);
  return rows[0]?.state;
}

/** Sends a notification and expects the empty 200 acknowledgement. */
async function delivered(t: TestServer, connectionId: string, signed: Signed): Promise<void> {
  const res = await postConnectionNotification(t, connectionId, signed);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(text).toBe('');
}

/** A purchase (SANDBOX_A), its card transaction and the connection it went through. */
async function purchased(t: TestServer, value = 150.5) {
  const created = await createPayment(t, { amount: { currency: 'BRL', value } });
  const purchase = created.transactions;
  return { paymentId: created.id, purchase, providerTransactionId: purchase.provider_data.transaction_id!, connectionId: await connectionOf(t, purchase.id) };
}

async function authorized(t: TestServer) {
  const created = await authorizedPayment(t);
  const auth = created.transactions;
  return { paymentId: created.id, auth, connectionId: await connectionOf(t, auth.id) };
}

const chargebackData = (providerTransactionId: string, chargebackId: string, amount = 150.5) => ({
  provider_transaction_id: providerTransactionId,
  chargeback_id: chargebackId,
  amount,
  reason: 'FRAUDULENT',
  reason_code: '10.4',
});

for (const backend of backends()) {
  describe(`receiveConnectionNotification on ${backend}`, () => {
    // The acquirers run here, so a test can make them hold an answer; reconciliation runs when told.
    let acquirers: SandboxAcquirers;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer(backend, { env });
    afterEach(async () => {
      for (const url of [acquirers.a.url, acquirers.b.url]) await fetch(`${url}/_sandbox/faults`, { method: 'DELETE' });
    });
    afterAll(() => acquirers.close());

    interface Row {
      name: string;
      /** Makes the payment the notifications are about; returns what they name. */
      run(): Promise<{ paymentId: string; connectionId: string; notifications: [string, Record<string, unknown>][] }>;
      expected: { status: string; sub_status: string; captured: number; refunded: number };
      events: string[];
      check?(p: Payment): Promise<void> | void;
    }

    const rows: Row[] = [
      {
        name: 'CHARGEBACK opens the dispute of the charge it names (found through the connection)',
        async run() {
          const p = await purchased(t);
          return { ...p, notifications: [['CHARGEBACK', chargebackData(p.providerTransactionId, `cb_${randomUUID()}`)]] };
        },
        expected: { status: 'IN_DISPUTE', sub_status: 'RECEIVED', captured: 150.5, refunded: 0 },
        events: ['payment.succeeded', 'payment.chargeback'],
        check(p) {
          expect(p.transactions.at(-1)).toMatchObject({ type: 'CHARGEBACK', status: 'CREATED', amount: 150.5, reason: 'FRAUDULENT', provider_id: 'SANDBOX_A' });
        },
      },
      {
        name: 'FOLLOW_UP_SETTLED refund FAILED (by our reference): the refund is undone and refundable again',
        async run() {
          const p = await purchased(t);
          const refunded = await ok(await postLifecycle(t, p.paymentId, 'refund', { amount: { currency: 'BRL', value: 50 } }, { transactionId: p.purchase.id }));
          expect(refunded).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 50 } });
          const refund = refunded.transactions.at(-1)!;
          return { ...p, notifications: [['FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', reference: refund.id, amount: 50, reason: 'The card account is closed' }]] };
        },
        expected: { status: 'SUCCEEDED', sub_status: 'APPROVED', captured: 150.5, refunded: 0 },
        events: ['payment.succeeded', 'payment.refunded', 'payment.operation.failed'],
        async check(p) {
          expect(p.transactions.at(-1)).toMatchObject({ type: 'REFUND', status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER', response_message: 'The card account is closed' });
          expect(p.transactions_history!.at(-1)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', transaction_status: 'DECLINED', reason: 'FAILED_AT_PROVIDER' });
          // The whole amount is refundable again.
          const again = await ok(await postLifecycle(t, p.id, 'refund', {}, { transactionId: p.transactions[0]!.id }));
          expect(again).toMatchObject({ status: 'REFUNDED', amount: { refunded: 150.5 } });
        },
      },
      {
        name: "FOLLOW_UP_SETTLED capture FAILED (by the provider's id): the authorization is uncaptured again",
        async run() {
          const a = await authorized(t);
          const captured = await ok(await postLifecycle(t, a.paymentId, 'capture', {}, { transactionId: a.auth.id }));
          const capture = captured.transactions.at(-1)!;
          return { ...a, notifications: [['FOLLOW_UP_SETTLED', { operation: 'CAPTURE', outcome: 'FAILED', provider_operation_id: capture.provider_data.transaction_id }]] };
        },
        expected: { status: 'PENDING', sub_status: 'AUTHORIZED', captured: 0, refunded: 0 },
        events: ['payment.authorized', 'payment.captured', 'payment.operation.failed'],
        async check(p) {
          expect(p.transactions.at(-1)).toMatchObject({ type: 'CAPTURE', status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER' });
          // The authorization can be captured again.
          expect(await ok(await postLifecycle(t, p.id, 'capture', {}, { transactionId: p.transactions[0]!.id }))).toMatchObject({ sub_status: 'CAPTURED' });
        },
      },
      {
        name: 'FOLLOW_UP_SETTLED capture FAILED after part of it was refunded: the authorization stands again, and nothing more can be refunded (409, never a 500)',
        async run() {
          const a = await authorized(t);
          const captured = await ok(await postLifecycle(t, a.paymentId, 'capture', {}, { transactionId: a.auth.id }));
          const capture = captured.transactions.at(-1)!;
          await ok(await postLifecycle(t, a.paymentId, 'refund', { amount: { currency: 'BRL', value: 40 } }, { transactionId: capture.id }));
          return { ...a, notifications: [['FOLLOW_UP_SETTLED', { operation: 'CAPTURE', outcome: 'FAILED', reference: capture.id }]] };
        },
        expected: { status: 'PENDING', sub_status: 'AUTHORIZED', captured: 0, refunded: 40 },
        events: ['payment.authorized', 'payment.captured', 'payment.refunded', 'payment.operation.failed'],
        async check(p) {
          const before = p.transactions.length;
          for (const body of [{ amount: { currency: 'BRL', value: 10 } }, {}]) {
            for (const on of p.transactions.filter((x) => x.type !== 'REFUND')) {
              const res = await postLifecycle(t, p.id, 'refund', body, { transactionId: on.id });
              expect(res.status, await res.clone().text()).toBe(409);
            }
          }
          expect((await getPayment(t, p.id)).transactions).toHaveLength(before);
        },
      },
      {
        name: 'FOLLOW_UP_SETTLED void FAILED: the authorization stands again',
        async run() {
          const a = await authorized(t);
          const canceled = await ok(await postLifecycle(t, a.paymentId, 'cancel', {}, { transactionId: a.auth.id }));
          expect(canceled.status).toBe('CANCELED');
          return { ...a, notifications: [['FOLLOW_UP_SETTLED', { operation: 'VOID', outcome: 'FAILED', reference: canceled.transactions.at(-1)!.id }]] };
        },
        expected: { status: 'PENDING', sub_status: 'AUTHORIZED', captured: 0, refunded: 0 },
        events: ['payment.authorized', 'payment.canceled', 'payment.operation.failed'],
      },
      {
        name: 'FOLLOW_UP_SETTLED refund CONFIRMED of a refund already recorded: nothing changes',
        async run() {
          const p = await purchased(t);
          const refunded = await ok(await postLifecycle(t, p.paymentId, 'refund', {}, { transactionId: p.purchase.id }));
          return { ...p, notifications: [['FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'CONFIRMED', reference: refunded.transactions.at(-1)!.id }]] };
        },
        expected: { status: 'REFUNDED', sub_status: 'REFUNDED', captured: 150.5, refunded: 150.5 },
        events: ['payment.succeeded', 'payment.refunded'],
      },
      ...(['WON', 'LOST'] as const).map(
        (outcome): Row => ({
          name: `DISPUTE_CLOSED ${outcome} decides the chargeback`,
          async run() {
            const p = await purchased(t);
            const chargebackId = `cb_${randomUUID()}`;
            return {
              ...p,
              notifications: [
                ['CHARGEBACK', chargebackData(p.providerTransactionId, chargebackId)],
                ['DISPUTE_CLOSED', { provider_transaction_id: p.providerTransactionId, chargeback_id: chargebackId, outcome }],
              ],
            };
          },
          expected: outcome === 'WON' ? { status: 'SUCCEEDED', sub_status: 'APPROVED', captured: 150.5, refunded: 0 } : { status: 'CHARGEBACK', sub_status: 'LOST', captured: 150.5, refunded: 0 },
          events: ['payment.succeeded', 'payment.chargeback', outcome === 'WON' ? 'payment.dispute.won' : 'payment.dispute.lost'],
          check(p) {
            expect(p.transactions.at(-1)).toMatchObject({ type: 'CHARGEBACK', status: outcome });
          },
        }),
      ),
      {
        name: 'DISPUTE_CLOSED WON after the merchant disputed with evidence: the dispute is resolved too',
        async run() {
          const p = await purchased(t);
          const chargebackId = `cb_${randomUUID()}`;
          await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', chargebackData(p.providerTransactionId, chargebackId)));
          const chargeback = (await getPayment(t, p.paymentId)).transactions.at(-1)!;
          const res = await postDispute(t, p.paymentId, chargeback.id, { evidence: [evidence()] });
          expect(res.status, await res.text()).toBe(200);
          return { ...p, notifications: [['DISPUTE_CLOSED', { provider_transaction_id: p.providerTransactionId, chargeback_id: chargebackId, outcome: 'WON' }]] };
        },
        expected: { status: 'SUCCEEDED', sub_status: 'APPROVED', captured: 150.5, refunded: 0 },
        events: ['payment.succeeded', 'payment.chargeback', 'payment.dispute.submitted', 'payment.dispute.won'],
        async check(p) {
          const rows = await t.db.query<{ status: string }>('SELECT status FROM disputes WHERE transaction_id = $1', [p.transactions.at(-1)!.id]);
          expect(rows.map((r) => r.status)).toEqual(['WON']);
        },
      },
      {
        name: 'DISPUTE_CLOSED WON after the refund approved before the chargeback FAILED while it was open: the payment is as before that refund (APPROVED), nothing refunded',
        async run() {
          const p = await purchased(t);
          const refunded = await ok(await postLifecycle(t, p.paymentId, 'refund', { amount: { currency: 'BRL', value: 30 } }, { transactionId: p.purchase.id }));
          expect(refunded).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED' });
          const chargebackId = `cb_${randomUUID()}`;
          return {
            ...p,
            notifications: [
              ['CHARGEBACK', chargebackData(p.providerTransactionId, chargebackId, 120.5)],
              ['FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', reference: refunded.transactions.at(-1)!.id }],
              ['DISPUTE_CLOSED', { provider_transaction_id: p.providerTransactionId, chargeback_id: chargebackId, outcome: 'WON' }],
            ],
          };
        },
        expected: { status: 'SUCCEEDED', sub_status: 'APPROVED', captured: 150.5, refunded: 0 },
        events: ['payment.succeeded', 'payment.refunded', 'payment.chargeback', 'payment.operation.failed', 'payment.dispute.won'],
        async check(p) {
          // The whole amount is refundable again.
          expect(await ok(await postLifecycle(t, p.id, 'refund', {}, { transactionId: p.transactions[0]!.id }))).toMatchObject({ status: 'REFUNDED', amount: { refunded: 150.5 } });
        },
      },
      ...([0, 40] as const).map(
        (refund): Row => ({
          name: `DISPUTE_CLOSED WON after the capture FAILED while the chargeback was open${refund ? ' (part of it refunded before)' : ''}: the authorization stands again, not CAPTURED with nothing captured`,
          async run() {
            const a = await authorized(t);
            const captured = await ok(await postLifecycle(t, a.paymentId, 'capture', {}, { transactionId: a.auth.id }));
            const capture = captured.transactions.at(-1)!;
            if (refund) await ok(await postLifecycle(t, a.paymentId, 'refund', { amount: { currency: 'BRL', value: refund } }, { transactionId: capture.id }));
            const chargebackId = `cb_${randomUUID()}`;
            const charged = a.auth.provider_data.transaction_id!;
            return {
              ...a,
              notifications: [
                ['CHARGEBACK', chargebackData(charged, chargebackId, 10)],
                ['FOLLOW_UP_SETTLED', { operation: 'CAPTURE', outcome: 'FAILED', reference: capture.id }],
                ['DISPUTE_CLOSED', { provider_transaction_id: charged, chargeback_id: chargebackId, outcome: 'WON' }],
              ],
            };
          },
          expected: { status: 'PENDING', sub_status: 'AUTHORIZED', captured: 0, refunded: refund },
          events: ['payment.authorized', 'payment.captured', ...(refund ? ['payment.refunded'] : []), 'payment.chargeback', 'payment.operation.failed', 'payment.dispute.won'],
          async check(p) {
            expect(p.transactions.find((x) => x.type === 'CHARGEBACK')).toMatchObject({ status: 'WON' });
            if (!refund) expect(await ok(await postLifecycle(t, p.id, 'capture', {}, { transactionId: p.transactions[0]!.id }))).toMatchObject({ sub_status: 'CAPTURED' });
          },
        }),
      ),
    ];

    it.each(rows)('$name', async (row) => {
      const { paymentId, connectionId, notifications } = await row.run();
      for (const [type, data] of notifications) await delivered(t, connectionId, await sandboxNotification(t, type, data));
      const p = await getPayment(t, paymentId, '?transactions_history=true');
      expectSchema('Payment', p);
      expect(p).toMatchObject({ status: row.expected.status, sub_status: row.expected.sub_status, amount: { captured: row.expected.captured, refunded: row.expected.refunded } });
      expect(await eventsOf(t, paymentId)).toEqual(row.events);
      await row.check?.(p);
    });

    it('the merchant event of a failed operation is listed at GET /v1/events with the payment and the transaction', async () => {
      const p = await purchased(t);
      const refunded = await ok(await postLifecycle(t, p.paymentId, 'refund', {}, { transactionId: p.purchase.id }));
      const refund = refunded.transactions.at(-1)!;
      await delivered(t, p.connectionId, await sandboxNotification(t, 'FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', reference: refund.id }));
      const list = (await (await t.fetch('/events?type=payment.operation.failed&limit=100')).json()) as Schemas['EventList'];
      const event = list.events.find((e) => (e.data as unknown as { payment: Payment }).payment.id === p.paymentId);
      expect(event, JSON.stringify(list)).toBeDefined();
      const data = event!.data as unknown as Schemas['EventPaymentOperationFailed']['data'];
      expectSchema('EventPaymentOperationFailed', { ...event, retry: 0, version: 1 });
      expect(data.transaction).toMatchObject({ id: refund.id, type: 'REFUND', status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER' });
      expect(data.payment).toMatchObject({ status: 'SUCCEEDED', amount: { refunded: 0 } });
    });

    describe('refused: 401 and nothing changes', () => {
      let target: Awaited<ReturnType<typeof purchased>>;
      beforeAll(async () => {
        target = await purchased(t);
      });
      const body = () => chargebackData(target.providerTransactionId, `cb_${randomUUID()}`);
      const cases: { name: string; make(): Promise<{ connectionId: string; signed: Signed }> }[] = [
        { name: 'a wrong secret', make: async () => ({ connectionId: target.connectionId, signed: await sandboxNotification(t, 'CHARGEBACK', body(), { secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` }) }) },
        {
          name: 'no signature headers',
          make: async () => {
            const signed = await sandboxNotification(t, 'CHARGEBACK', body());
            return { connectionId: target.connectionId, signed: { raw: signed.raw, headers: { 'content-type': 'application/json' } } };
          },
        },
        { name: 'a stale timestamp (10 minutes old)', make: async () => ({ connectionId: target.connectionId, signed: await sandboxNotification(t, 'CHARGEBACK', body(), { at: new Date(Date.now() - 600_000) }) }) },
        {
          name: 'a signature over another body',
          make: async () => {
            const signed = await sandboxNotification(t, 'CHARGEBACK', body());
            return { connectionId: target.connectionId, signed: { ...signed, raw: signed.raw.replace('"amount":150.5', '"amount":1') } };
          },
        },
        { name: 'an unknown connection id', make: async () => ({ connectionId: randomUUID(), signed: await sandboxNotification(t, 'CHARGEBACK', body()) }) },
        { name: 'a connection id that is not one', make: async () => ({ connectionId: 'not-a-connection', signed: await sandboxNotification(t, 'CHARGEBACK', body()) }) },
      ];
      it.each(cases)('$name', async ({ make }) => {
        const { connectionId, signed } = await make();
        const before = await footprint(t);
        const problem = await expectProblem(await postConnectionNotification(t, connectionId, signed), 401, 'INVALID_CREDENTIALS');
        // One answer for every case: which connection ids exist is not told.
        expect(problem.detail).toBe('The notification is not signed for this connection, or its signature is wrong or outside the accepted time window.');
        expect(await footprint(t)).toEqual(before);
        expect((await getPayment(t, target.paymentId)).status).toBe('SUCCEEDED');
      });
    });

    it('a re-delivery (same notification id) changes nothing twice', async () => {
      const p = await purchased(t);
      const signed = await sandboxNotification(t, 'CHARGEBACK', chargebackData(p.providerTransactionId, `cb_${randomUUID()}`));
      await delivered(t, p.connectionId, signed);
      const after = await getPayment(t, p.paymentId, '?transactions_history=true');
      const before = await footprint(t);
      await delivered(t, p.connectionId, signed);
      expect(await footprint(t)).toEqual(before);
      expect(await getPayment(t, p.paymentId, '?transactions_history=true')).toEqual(after);
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded', 'payment.chargeback']);
    });

    it('the same chargeback under a new notification id (a provider re-announcing it) is recorded once', async () => {
      const p = await purchased(t);
      const data = chargebackData(p.providerTransactionId, `cb_${randomUUID()}`);
      await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', data));
      const again = await sandboxNotification(t, 'CHARGEBACK', data);
      await delivered(t, p.connectionId, again);
      expect(await notificationState(t, p.connectionId, JSON.parse(again.raw).id)).toBe('UNCHANGED');
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded', 'payment.chargeback']);
    });

    it('out of order: a dispute closed before its chargeback arrived is kept, and applied when the chargeback lands', async () => {
      const p = await purchased(t);
      const chargebackId = `cb_${randomUUID()}`;
      const closed = await sandboxNotification(t, 'DISPUTE_CLOSED', { provider_transaction_id: p.providerTransactionId, chargeback_id: chargebackId, outcome: 'WON' });
      await delivered(t, p.connectionId, closed);
      expect(await notificationState(t, p.connectionId, JSON.parse(closed.raw).id)).toBe('PARKED');
      expect((await getPayment(t, p.paymentId)).status).toBe('SUCCEEDED');
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded']);

      await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', chargebackData(p.providerTransactionId, chargebackId)));
      const after = await getPayment(t, p.paymentId);
      expect(after).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(after.transactions.at(-1)).toMatchObject({ type: 'CHARGEBACK', status: 'WON' });
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded', 'payment.chargeback', 'payment.dispute.won']);
      expect(await notificationState(t, p.connectionId, JSON.parse(closed.raw).id)).toBe('APPLIED');
      // Delivered again: nothing changes.
      const before = await footprint(t);
      await delivered(t, p.connectionId, closed);
      expect(await footprint(t)).toEqual(before);
    });

    /** A whole refund of the purchase that A approves and whose answer is lost (A silent): 502, the refund PENDING. */
    async function refundWithLostAnswer(p: Awaited<ReturnType<typeof purchased>>): Promise<void> {
      await t.fetch(`/connections/${p.connectionId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeout_ms: 500 }) });
      await fetch(`${acquirers.a.url}/_sandbox/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ failRate: 1, mode: 'silent' }) });
      await expectProblem(await postLifecycle(t, p.paymentId, 'refund', {}, { transactionId: p.purchase.id }), 502, 'PROVIDER_UNAVAILABLE');
      await fetch(`${acquirers.a.url}/_sandbox/faults`, { method: 'DELETE' });
    }

    it("out of order: a refund's failure delivered (twice) before its answer was recorded settles it DECLINED and releases the reservation", async () => {
      const p = await purchased(t);
      await refundWithLostAnswer(p);
      const pending = (await getPayment(t, p.paymentId)).transactions.at(-1)!;
      expect(pending).toMatchObject({ type: 'REFUND', status: 'PENDING' });

      const failed = await sandboxNotification(t, 'FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', reference: pending.id, reason: 'Refused by the issuer' });
      await delivered(t, p.connectionId, failed);
      const settled = await getPayment(t, p.paymentId);
      expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
      expect(settled.transactions.at(-1)).toMatchObject({ id: pending.id, status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER' });
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded', 'payment.operation.failed']);

      const before = await footprint(t);
      await delivered(t, p.connectionId, failed);
      expect(await footprint(t)).toEqual(before);
      // The reconciliation finds nothing PENDING to ask about: the acquirer's late approval changes nothing.
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      expect((await getPayment(t, p.paymentId)).transactions.at(-1)).toMatchObject({ id: pending.id, status: 'DECLINED' });
      // The reservation is released: the whole amount can be refunded.
      expect(await ok(await postLifecycle(t, p.paymentId, 'refund', {}, { transactionId: p.purchase.id }))).toMatchObject({ status: 'REFUNDED' });
    });

    it("out of order: a failure naming only the provider's refund id is kept until the refund's answer lands, then undoes it", async () => {
      const p = await purchased(t);
      await refundWithLostAnswer(p);
      const pending = (await getPayment(t, p.paymentId)).transactions.at(-1)!;
      // The acquirer approved the refund (its answer was held): its own id for it.
      const ledger = (await (await fetch(`${acquirers.a.url}/_sandbox/ledger`)).json()) as { operations: { reference: string; id: string }[] };
      const refundId = ledger.operations.find((o) => o.reference === pending.id)!.id;

      const failed = await sandboxNotification(t, 'FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', provider_operation_id: refundId });
      await delivered(t, p.connectionId, failed);
      expect(await notificationState(t, p.connectionId, JSON.parse(failed.raw).id)).toBe('PARKED');
      expect((await getPayment(t, p.paymentId)).transactions.at(-1)).toMatchObject({ id: pending.id, status: 'PENDING' });

      // The reconciliation records the acquirer's approval; the kept failure then undoes it.
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const after = await getPayment(t, p.paymentId);
      expect(after).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
      expect(after.transactions.at(-1)).toMatchObject({ id: pending.id, status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER' });
      expect(await eventsOf(t, p.paymentId)).toEqual(['payment.succeeded', 'payment.refunded', 'payment.operation.failed']);
      expect(await notificationState(t, p.connectionId, JSON.parse(failed.raw).id)).toBe('APPLIED');
    });

    it('a refund approved while a chargeback is open counts when the dispute is won: the payment ends REFUNDED, not APPROVED, and is not charged back again', async () => {
      const p = await purchased(t);
      await refundWithLostAnswer(p);
      const chargebackId = `cb_${randomUUID()}`;
      await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', chargebackData(p.providerTransactionId, chargebackId)));
      expect(await getPayment(t, p.paymentId)).toMatchObject({ status: 'IN_DISPUTE', amount: { refunded: 0 } });
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      expect(await getPayment(t, p.paymentId)).toMatchObject({ status: 'IN_DISPUTE', amount: { captured: 150.5, refunded: 150.5 } });

      await delivered(t, p.connectionId, await sandboxNotification(t, 'DISPUTE_CLOSED', { provider_transaction_id: p.providerTransactionId, chargeback_id: chargebackId, outcome: 'WON' }));
      expect(await getPayment(t, p.paymentId)).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { captured: 150.5, refunded: 150.5 } });
      await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', chargebackData(p.providerTransactionId, `cb_${randomUUID()}`)));
      const after = await getPayment(t, p.paymentId);
      expect(after).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED' });
      expect(after.transactions.filter((x) => x.type === 'CHARGEBACK')).toHaveLength(1);
    });

    it("a chargeback keeps its notification as raw response only bounded and masked: no card number, at most 8 KiB", async () => {
      const p = await purchased(t);
      const pan = '4111111111111111';
      const data = { ...chargebackData(p.providerTransactionId, `cb_${randomUUID()}`), note: `card ${pan} of the shopper`, padding: 'x'.repeat(20_000) };
      await delivered(t, p.connectionId, await sandboxNotification(t, 'CHARGEBACK', data));
      const read = await getPayment(t, p.paymentId, '?raw_response=true');
      const chargeback = read.transactions.at(-1)!;
      expect(chargeback).toMatchObject({ type: 'CHARGEBACK' });
      const text = JSON.stringify(chargeback.provider_data!.raw_response);
      expect(text).toContain('[REDACTED]');
      expect(text).not.toContain(pan);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8 * 1024);
      const stored = await t.db.query<{ raw: string }>('SELECT raw_response::text AS raw FROM payment_transactions WHERE id = $1', [chargeback.id]);
      expect(stored[0]!.raw).not.toContain(pan);
    });

    it('an unknown notification type is acknowledged and ignored', async () => {
      const p = await purchased(t);
      const before = await footprint(t);
      await delivered(t, p.connectionId, await sandboxNotification(t, 'PAYOUT_PAID', { payout_id: 'po_1', amount: 10 }));
      expect(await footprint(t)).toEqual(before);
    });

    it('a body over 256 KiB is 413 and changes nothing', async () => {
      const p = await purchased(t);
      const before = await footprint(t);
      const signed = await sandboxNotification(t, 'CHARGEBACK', { ...chargebackData(p.providerTransactionId, 'cb_big'), padding: 'x'.repeat(256 * 1024) });
      await expectProblem(await postConnectionNotification(t, p.connectionId, signed), 413, 'PAYLOAD_TOO_LARGE');
      expect(await footprint(t)).toEqual(before);
    });

    it("a notification naming another organization's payment changes nothing there", async () => {
      // B: its own organization, its own payment through its own connection.
      const creds = await t.createOrganization({ pciCertified: true });
      const asB = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const customer = await t.clientFor(creds).POST('/customers', { body: { merchant_customer_id: `cus-b-${randomUUID()}` } });
      const created = await postPayment(t, { ...paymentBody(t, customer.data!.id), account_id: creds.account_id }, { headers: asB });
      expect(created.status).toBe(201);
      const bPayment = (await created.json()) as Schemas['CreatedPayment'];
      const bPurchase = bPayment.transactions;
      const read = async () => (await t.fetch(`/payments/${bPayment.id}?transactions_history=true`, { headers: asB })).json();
      const before = await read();

      // Sent to A's connection (a connection of the sandbox organization), naming B's charge and B's refund.
      const aConnection = (await purchased(t)).connectionId;
      await delivered(t, aConnection, await sandboxNotification(t, 'CHARGEBACK', { ...chargebackData(bPurchase.provider_data.transaction_id!, `cb_${randomUUID()}`), payment_id: bPayment.id }));
      await delivered(t, aConnection, await sandboxNotification(t, 'FOLLOW_UP_SETTLED', { operation: 'REFUND', outcome: 'FAILED', reference: bPurchase.id }));
      expect(await read()).toEqual(before);
      expect(await eventsOf(t, bPayment.id)).toEqual(['payment.succeeded']);
    });
  });
}
