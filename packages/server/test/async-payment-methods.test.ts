/**
 * Asynchronous payment methods (issue 24 item 4) through the public API and both sandbox acquirers, on each
 * backend, one server per backend: PIX, a bank transfer, cash vouchers (OXXO, boleto) and redirect wallets
 * start PENDING with the shopper's action (Yuno's payment_method_detail) and end by the provider's signed
 * notification — paid, declined, cancelled (the wallet page's buttons), expired on demand — or by the
 * expiry worker at the deadline; each change is an event (GET /v1/events). PIX and wallets refund, cash
 * answers 409 REFUND_NOT_SUPPORTED with nothing written. Failover only before an action was shown; the
 * expiry worker's claim is exactly once across two workers on one database.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { ExpiryWorker } from '../src/payments/async-methods/expiry-worker.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { getPayment, postLifecycle, postPayment } from './support/payments.js';

type Created = Schemas['CreatedPayment'];
type AsyncType = 'PIX' | 'BANK_TRANSFER' | 'OXXO' | 'BOLETO' | 'PAYPAL' | 'MERCADO_PAGO_WALLET';

const body = (t: TestServer, type: AsyncType, over: Record<string, unknown> = {}) => ({
  account_id: t.sandbox.account_id,
  description: `Order with ${type}`,
  country: type === 'OXXO' ? 'MX' : 'BR',
  merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`,
  amount: { currency: type === 'OXXO' ? 'MXN' : 'BRL', value: 120.5 },
  customer_payer: { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com' },
  payment_method: { type },
  workflow: 'DIRECT',
  ...over,
});

async function create(t: TestServer, type: AsyncType, over: Record<string, unknown> = {}, key = randomUUID()): Promise<Created> {
  const res = await postPayment(t, body(t, type, over), { key });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const created = JSON.parse(text) as Created;
  expectSchema('CreatedPayment', created);
  return created;
}

async function outcome(t: TestServer, id: string, what: 'PAY' | 'DECLINE' | 'EXPIRE' | 'CANCEL'): Promise<Response> {
  return t.fetch(`/sandbox/payments/${id}/outcome`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome: what }) });
}

async function settled(t: TestServer, id: string, what: 'PAY' | 'DECLINE' | 'EXPIRE' | 'CANCEL'): Promise<Schemas['Payment']> {
  const res = await outcome(t, id, what);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const payment = JSON.parse(text) as Schemas['Payment'];
  expectSchema('Payment', payment);
  return payment;
}

/** The event types recorded for a payment, oldest first. */
async function eventsOf(t: TestServer, paymentId: string): Promise<string[]> {
  const res = await t.fetch('/events?limit=100');
  const list = (await res.json()) as Schemas['EventList'];
  return list.events
    .filter((e) => (e.data as { payment?: { id?: string } }).payment?.id === paymentId)
    .map((e) => e.type_event)
    .reverse();
}

/** What the shopper is shown, per method, and the members that must be filled. */
const ACTIONS: { type: AsyncType; member: 'bank_transfer' | 'ticket' | 'wallet'; check(d: Schemas['PaymentMethodDetail']): void }[] = [
  {
    type: 'PIX',
    member: 'bank_transfer',
    check: (d) => {
      // A BR Code: payload format 01, the PIX domain, the amount, closed by a 4-hex CRC.
      expect(d.bank_transfer!.qr_code).toMatch(/^000201.*br\.gov\.bcb\.pix.*5406120\.50.*6304[0-9A-F]{4}$/);
    },
  },
  { type: 'BANK_TRANSFER', member: 'bank_transfer', check: (d) => expect(d.bank_transfer).toMatchObject({ bank_account: expect.stringMatching(/^\d{12}$/), reference: expect.stringMatching(/^TRF\d{10}$/), qr_code: null }) },
  {
    type: 'OXXO',
    member: 'ticket',
    check: (d) => expect(d.ticket).toMatchObject({ type: 'OXXO', provider_number: expect.stringMatching(/^0\d{13}$/), provider_barcode: expect.stringMatching(/^\d{30}$/), date_of_expiration: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) }),
  },
  { type: 'BOLETO', member: 'ticket', check: (d) => expect(d.ticket).toMatchObject({ type: 'BOLETO', provider_barcode: expect.stringMatching(/^\d{44}$/), provider_format: 'ITF' }) },
  { type: 'PAYPAL', member: 'wallet', check: (d) => expect(d.wallet!.redirect_url).toMatch(/\/v1\/sandbox\/payments\/[0-9a-f-]{36}\/wallet$/) },
  { type: 'MERCADO_PAGO_WALLET', member: 'wallet', check: (d) => expect(d.wallet!.redirect_url).toMatch(/\/wallet$/) },
];

for (const backend of backends()) {
  describe(`asynchronous payment methods on ${backend}`, () => {
    const t = useServer(backend);

    it.each(ACTIONS)('$type: PENDING with the action and its expiry, then paid by the provider’s notification → SUCCEEDED, with its events', async ({ type, member, check }) => {
      const key = randomUUID();
      const request = body(t, type);
      const res = await postPayment(t, request, { key });
      expect(res.status, await res.clone().text()).toBe(201);
      const created = (await res.json()) as Created;
      expectSchema('CreatedPayment', created);
      expect([created.status, created.sub_status]).toEqual(['PENDING', 'PENDING']);
      const detail = created.payment_method.payment_method_detail;
      check(detail);
      for (const other of ['card', 'bank_transfer', 'ticket', 'wallet'] as const) if (other !== member) expect(detail[other]).toBeNull();
      const expiresAt = Date.parse((detail[member] as { expires_at: string }).expires_at);
      expect(expiresAt).toBeGreaterThan(Date.now());
      expect(created.transactions).toMatchObject({ type: 'PURCHASE', status: 'CREATED', provider_id: 'SANDBOX_A' });
      expect(created.transactions.payment_method.detail[member]).toEqual(detail[member]);
      // The same key replays the same payment.
      const again = await postPayment(t, request, { key });
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(((await again.json()) as Created).id).toBe(created.id);

      const paid = await settled(t, created.id, 'PAY');
      expect([paid.status, paid.sub_status, paid.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
      expect(paid.transactions[0]!.status).toBe('SUCCEEDED');
      expect(await eventsOf(t, created.id)).toEqual(['payment.pending', 'payment.succeeded']);
      // A second move finds it no longer waiting.
      await expectProblem(await outcome(t, created.id, 'PAY'), 409, 'INVALID_STATUS');
    });

    it('the expiry worker: every waiting payment past its deadline EXPIRED once (PIX, OXXO voucher, PAYPAL wallet), with payment.expired', async () => {
      const payments = [await create(t, 'PIX'), await create(t, 'OXXO'), await create(t, 'PAYPAL')];
      const worker = new ExpiryWorker({ db: t.db, log: t.running.deps.log });
      // Nothing is due now.
      expect(await worker.runOnce(new Date())).toBe(0);
      // Four days on, past the PIX code's 30 minutes and the voucher's three days.
      expect(await worker.runOnce(new Date(Date.now() + 4 * 86_400_000))).toBeGreaterThanOrEqual(3);
      for (const p of payments) {
        const after = await getPayment(t, p.id);
        expect([after.status, after.sub_status, after.transactions[0]!.status]).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
        expect(await eventsOf(t, p.id)).toEqual(['payment.pending', 'payment.expired']);
        await expectProblem(await outcome(t, p.id, 'PAY'), 409, 'INVALID_STATUS');
      }
      expect(await worker.runOnce(new Date(Date.now() + 4 * 86_400_000))).toBe(0);
    });

    it('PIX paid, then refunded (part, then the rest): REFUNDED with payment.refunded; a cash voucher paid answers 409 REFUND_NOT_SUPPORTED with nothing written', async () => {
      const pix = await create(t, 'PIX');
      // One CREATED row in the history, written with the payment (as for cards), and its routing decision.
      const created = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM payment_history WHERE payment_id = $1 AND status = 'CREATED'", [pix.id]);
      expect(created[0]!.n).toBe(1);
      expect((await t.db.query<{ r: unknown }>('SELECT routing_rules AS r FROM payments WHERE id = $1', [pix.id]))[0]!.r).not.toBeNull();
      await settled(t, pix.id, 'PAY');
      const purchase = pix.transactions.id;
      const part = await postLifecycle(t, pix.id, 'refund', { amount: { currency: 'BRL', value: 20.5 } }, { transactionId: purchase });
      expect(part.status, await part.clone().text()).toBe(200);
      expect(((await part.json()) as Schemas['Payment']).sub_status).toBe('PARTIALLY_REFUNDED');
      const rest = await postLifecycle(t, pix.id, 'refund', {}, { transactionId: purchase });
      expect(rest.status).toBe(200);
      const refunded = (await rest.json()) as Schemas['Payment'];
      expect([refunded.status, refunded.amount.refunded]).toEqual(['REFUNDED', 120.5]);
      expect(await eventsOf(t, pix.id)).toEqual(['payment.pending', 'payment.succeeded', 'payment.refunded', 'payment.refunded']);

      const oxxo = await create(t, 'OXXO');
      await settled(t, oxxo.id, 'PAY');
      const before = await getPayment(t, oxxo.id);
      const refused = await expectProblem(await postLifecycle(t, oxxo.id, 'refund', {}, { transactionId: oxxo.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
      expect(String(refused.detail)).toMatch(/OXXO payment cannot be refunded/);
      const cancelOrRefund = await t.fetch(`/payments/${oxxo.id}/cancel-or-refund`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-idempotency-key': randomUUID() }, body: '{}' });
      await expectProblem(cancelOrRefund, 409, 'REFUND_NOT_SUPPORTED');
      expect(await getPayment(t, oxxo.id)).toEqual(before);
    });

    it('declined by the provider, expired on demand, and a wallet cancelled (and one approved) on its page → DECLINED, EXPIRED, CANCELED, SUCCEEDED with their events', async () => {
      const declined = await create(t, 'BOLETO');
      expect((await settled(t, declined.id, 'DECLINE')).status).toBe('DECLINED');
      expect(await eventsOf(t, declined.id)).toEqual(['payment.pending', 'payment.declined']);

      const expired = await create(t, 'BANK_TRANSFER');
      expect((await settled(t, expired.id, 'EXPIRE')).status).toBe('EXPIRED');
      expect(await eventsOf(t, expired.id)).toEqual(['payment.pending', 'payment.expired']);

      // The shopper on the wallet's page (a form post), sent back to the merchant's callback_url.
      for (const [decision, status, event] of [
        ['cancel', 'CANCELED', 'payment.canceled'],
        ['approve', 'SUCCEEDED', 'payment.succeeded'],
      ] as const) {
        const wallet = await create(t, 'MERCADO_PAGO_WALLET', { callback_url: 'https://shop.example.com/return' });
        const page = new URL(wallet.payment_method.payment_method_detail.wallet!.redirect_url!);
        const html = await (await fetch(`${t.running.url}${page.pathname}`)).text();
        expect(html).toContain('Pay 120.5 BRL');
        const posted = await fetch(`${t.running.url}${page.pathname}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `decision=${decision}`,
          redirect: 'manual',
        });
        expect(posted.status).toBe(303);
        expect(posted.headers.get('location')).toBe(`https://shop.example.com/return?payment_id=${wallet.id}&status=${status}`);
        expect((await getPayment(t, wallet.id)).status).toBe(status);
        expect(await eventsOf(t, wallet.id)).toEqual(['payment.pending', event]);
        // The page again: finished, no buttons.
        expect(await (await fetch(`${t.running.url}${page.pathname}`)).text()).toContain(`data-status="${status}"`);
      }
    });

    it('failover only before an action is shown: SANDBOX_A errs (cents .77) → SANDBOX_B issues it; a refusal (cents .51) stops the route → DECLINED', async () => {
      const over = await create(t, 'PIX', { amount: { currency: 'BRL', value: 10.77 } });
      expect(over.transactions_history!.map((x) => [x.provider_id, x.status])).toEqual([
        ['SANDBOX_A', 'ERROR'],
        ['SANDBOX_B', 'CREATED'],
      ]);
      expect(over.status).toBe('PENDING');
      expect(over.payment_method.payment_method_detail.bank_transfer!.qr_code).toContain('540510.77');
      // Through B too: paid by B's notification, refunded at B.
      await settled(t, over.id, 'PAY');
      const refund = await postLifecycle(t, over.id, 'refund', {}, { transactionId: over.transactions.id });
      expect(refund.status, await refund.clone().text()).toBe(200);

      const refused = await create(t, 'OXXO', { amount: { currency: 'MXN', value: 10.51 } });
      expect([refused.status, refused.transactions_history!.map((x) => [x.provider_id, x.status])]).toEqual(['DECLINED', [['SANDBOX_A', 'DECLINED']]]);
      expect(await eventsOf(t, refused.id)).toEqual(['payment.declined']);
    });

    it('card-only members are refused for an asynchronous type, naming the field; a type nobody serves is 400; nothing written', async () => {
      const before = (await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM payments'))[0]!.n;
      const bad = await expectProblem(await postPayment(t, body(t, 'PIX', { payment_method: { type: 'PIX', vault_on_success: true } })), 400, 'INVALID_REQUEST');
      expect(bad.errors).toEqual([{ path: '/body/payment_method/vault_on_success', message: 'is not allowed with type PIX' }]);
      await expectProblem(await postPayment(t, body(t, 'PIX', { payment_method: { type: 'CRYPTO' } })), 400, 'INVALID_REQUEST');
      expect((await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM payments'))[0]!.n).toBe(before);
    });

    it('the expiry claim is exactly once across two workers on one database: each payment expired by one of them, one event each', async () => {
      const payments = await Promise.all(Array.from({ length: 12 }, () => create(t, 'PIX')));
      const waiting = Number((await t.db.query<{ n: string }>("SELECT count(*)::text AS n FROM payments WHERE status = 'PENDING' AND action_expires_at IS NOT NULL"))[0]!.n);
      const later = new Date(Date.now() + 86_400_000);
      const workers = [0, 1].map(() => new ExpiryWorker({ db: t.db, log: t.running.deps.log, batch: 3 }));
      const counts = await Promise.all(workers.map((w) => w.runOnce(later)));
      expect(counts[0]! + counts[1]!).toBe(waiting);
      for (const p of payments) {
        expect((await getPayment(t, p.id)).status).toBe('EXPIRED');
        expect(await eventsOf(t, p.id)).toEqual(['payment.pending', 'payment.expired']);
      }
    });
  });
}
