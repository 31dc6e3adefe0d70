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
type AsyncType = 'PIX' | 'BANK_TRANSFER' | 'OXXO' | 'BOLETO' | 'PAYPAL' | 'MERCADO_PAGO_WALLET' | 'CASH' | 'APPLE_PAY' | 'GOOGLE_PAY';

/** Where each type is paid in these tests (CASH and the wallets in the US, as Yuno's examples). */
const COUNTRY: Partial<Record<AsyncType, [country: string, currency: string]>> = { OXXO: ['MX', 'MXN'], CASH: ['US', 'USD'], APPLE_PAY: ['US', 'USD'], GOOGLE_PAY: ['US', 'USD'] };

const body = (t: TestServer, type: AsyncType, over: Record<string, unknown> = {}) => ({
  account_id: t.sandbox.account_id,
  description: `Order with ${type}`,
  country: (COUNTRY[type] ?? ['BR'])[0],
  merchant_order_id: `ORDER-${randomUUID().slice(0, 8)}`,
  amount: { currency: (COUNTRY[type] ?? ['BR', 'BRL'])[1], value: 120.5 },
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
  // Yuno's generic cash voucher, in the US: the sandbox's partner-store voucher (by country: see the CASH test).
  {
    type: 'CASH',
    member: 'ticket',
    check: (d) => expect(d.ticket).toMatchObject({ type: 'CASH', provider_number: expect.stringMatching(/^0\d{15}$/), provider_barcode: expect.stringMatching(/^0\d{23}$/), provider_format: 'CODE128', date_of_expiration: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) }),
  },
  // Apple Pay without a token (Yuno's "Wallet - Direct"): the shopper approves on the wallet's page.
  { type: 'APPLE_PAY', member: 'wallet', check: (d) => expect(d.wallet!.redirect_url).toMatch(/\/v1\/sandbox\/payments\/[0-9a-f-]{36}\/wallet$/) },
];

/** A GOOGLE_PAY request: the wallet's token (unique, so a scan can look for it) and the card's last four. */
const googlePay = (lfd: string) => ({
  type: 'GOOGLE_PAY',
  detail: { wallet: { payment_token: JSON.stringify({ signature: `sig-${randomUUID()}`, protocolVersion: 'ECv2', signedMessage: randomUUID() }), card_data: { lfd } } },
});

/** Every cell of every table and every log line of the server, as text. */
async function everywhere(t: TestServer): Promise<string> {
  const tables = await t.db.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'");
  const cells: string[] = [];
  for (const { name } of tables) for (const row of await t.db.query<{ r: string }>(`SELECT x::text AS r FROM "${name}" x`)) cells.push(row.r);
  return [...cells, ...t.logs].join('\n');
}

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

    it('PIX from the payer’s named account (detail.bank_transfer): the account reaches the acquirer (A errs on cents .77, B issues it), the payment keeps its last four only; paid → SUCCEEDED with its events', async () => {
      const number = `64618${String(Date.now()).slice(-13)}`;
      t.rememberSecret(number, 'payer account number');
      const bankTransfer = {
        code: 'PIX2',
        branch: '0001',
        branch_digit: '7',
        country: 'BRL',
        account: { number, digit: '123456', type: 'SAVINGS' },
        bank_account_mask_number: '****6789',
        mandate: { id: 'MND-123', info: 'free text mandate info', received_status: 'RECEIVED', existing_status: 'ACTIVE', created_at: '2026-07-09T00:00:00Z', updated_at: '2026-07-09T00:00:00Z' },
      };
      const p = await create(t, 'PIX', { amount: { currency: 'BRL', value: 10.77 }, payment_method: { type: 'PIX', detail: { bank_transfer: bankTransfer } } });
      expect([p.status, p.sub_status]).toEqual(['PENDING', 'PENDING']);
      expect(p.transactions_history!.map((x) => [x.provider_id, x.status])).toEqual([
        ['SANDBOX_A', 'ERROR'],
        ['SANDBOX_B', 'CREATED'],
      ]);
      expect(p.payment_method.payment_method_detail.bank_transfer!.qr_code).toContain('540510.77');
      // B answered with the account it will be paid from, masked (its raw answer as stored).
      const raw = await t.db.query<{ r: string }>('SELECT raw_response::text AS r FROM payment_transactions WHERE payment_id = $1 AND provider_id = $2', [p.id, 'SANDBOX_B']);
      expect(raw[0]!.r).toContain(number.slice(-4));
      const stored = (await t.db.query<{ d: Record<string, unknown> }>('SELECT request_details AS d FROM payments WHERE id = $1', [p.id]))[0]!.d;
      expect(stored.payer_bank_account).toEqual({ ...bankTransfer, account: { number_last_four: number.slice(-4), type: 'SAVINGS' } });
      const paid = await settled(t, p.id, 'PAY');
      expect([paid.status, paid.sub_status]).toEqual(['SUCCEEDED', 'APPROVED']);
      expect(await eventsOf(t, p.id)).toEqual(['payment.pending', 'payment.succeeded']);
      // The account number and its check digit are in no table and no log line.
      const all = await everywhere(t);
      expect(all).not.toContain(number);
      expect(all).not.toContain('"digit"');
      // A transfer's account is for PIX and BANK_TRANSFER only; a wallet's token for GOOGLE_PAY only.
      const misplaced = await expectProblem(await postPayment(t, body(t, 'OXXO', { payment_method: { type: 'OXXO', detail: { bank_transfer: bankTransfer } } })), 400, 'INVALID_REQUEST');
      expect(misplaced.errors).toEqual([{ path: '/body/payment_method/detail/bank_transfer', message: 'is not allowed with type OXXO' }]);
    });

    it('CASH: the voucher of the payment’s country (MX an OXXO voucher, BR a boleto, CO Efecty), PENDING until paid, declined or expired; paid cash is not refundable', async () => {
      const mx = await create(t, 'CASH', { country: 'MX', amount: { currency: 'MXN', value: 120.5 } });
      expect(mx.payment_method.payment_method_detail.ticket).toMatchObject({ type: 'OXXO', provider_barcode: expect.stringMatching(/^\d{30}$/) });
      expect(mx.transactions).toMatchObject({ category: 'TICKET', status: 'CREATED' });
      const br = await create(t, 'CASH', { country: 'BR', amount: { currency: 'BRL', value: 120.5 } });
      expect(br.payment_method.payment_method_detail.ticket).toMatchObject({ type: 'BOLETO', provider_format: 'ITF' });
      const co = await create(t, 'CASH', { country: 'CO', amount: { currency: 'COP', value: 120000 } });
      expect(co.payment_method.payment_method_detail.ticket).toMatchObject({ type: 'EFECTY', payment_instruction: expect.stringContaining('EFECTY') });

      expect((await settled(t, br.id, 'DECLINE')).status).toBe('DECLINED');
      expect(await eventsOf(t, br.id)).toEqual(['payment.pending', 'payment.declined']);
      expect((await settled(t, co.id, 'EXPIRE')).status).toBe('EXPIRED');
      expect(await eventsOf(t, co.id)).toEqual(['payment.pending', 'payment.expired']);
      const paid = await settled(t, mx.id, 'PAY');
      expect([paid.status, paid.sub_status]).toEqual(['SUCCEEDED', 'APPROVED']);
      expect(await eventsOf(t, mx.id)).toEqual(['payment.pending', 'payment.succeeded']);
      await expectProblem(await postLifecycle(t, mx.id, 'refund', {}, { transactionId: mx.transactions.id }), 409, 'REFUND_NOT_SUPPORTED');
    });

    it('APPLE_PAY without a token (detail.card verify: false): approved on the wallet’s page → SUCCEEDED, or cancelled → CANCELED; a card, a verification or an authorization is refused naming the member', async () => {
      const apple = (over: Record<string, unknown> = {}) => ({ type: 'APPLE_PAY', detail: { card: { verify: false, ...over } } });
      for (const [decision, status, event] of [
        ['approve', 'SUCCEEDED', 'payment.succeeded'],
        ['cancel', 'CANCELED', 'payment.canceled'],
      ] as const) {
        const wallet = await create(t, 'APPLE_PAY', { payment_method: apple(), callback_url: 'https://shop.example.com/return' });
        expect([wallet.status, wallet.transactions.category]).toEqual(['PENDING', 'WALLET']);
        const page = new URL(wallet.payment_method.payment_method_detail.wallet!.redirect_url!);
        const posted = await fetch(`${t.running.url}${page.pathname}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `decision=${decision}`, redirect: 'manual' });
        expect(posted.status).toBe(303);
        expect((await getPayment(t, wallet.id)).status).toBe(status);
        expect(await eventsOf(t, wallet.id)).toEqual(['payment.pending', event]);
      }
      const before = (await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM payments'))[0]!.n;
      for (const [over, member] of [
        [{ verify: true }, 'verify'],
        [{ capture: false }, 'capture'],
        [{ installments: 3 }, 'installments'],
      ] as const) {
        const refused = await expectProblem(await postPayment(t, body(t, 'APPLE_PAY', { payment_method: apple(over) })), 400, 'INVALID_REQUEST');
        expect(refused.errors).toEqual([{ path: `/body/payment_method/detail/card/${member}`, message: 'is not allowed with type APPLE_PAY' }]);
      }
      expect((await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM payments'))[0]!.n).toBe(before);
    });

    it('GOOGLE_PAY: the token authorized at once as the test card of its last four — approved (then refunded), declined, or an error that fails over — and never stored or logged', async () => {
      const approved = googlePay('1515');
      t.rememberSecret(approved.detail.wallet.payment_token, 'Google Pay token');
      const ok = await create(t, 'GOOGLE_PAY', { payment_method: approved });
      expect([ok.status, ok.sub_status, ok.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
      expect(ok.transactions).toMatchObject({ type: 'PURCHASE', status: 'SUCCEEDED', category: 'WALLET', provider_id: 'SANDBOX_A' });
      expect(ok.payment_method.payment_method_detail).toEqual({ card: null, bank_transfer: null, ticket: null, wallet: { redirect_url: null, expires_at: null } });
      expect(await eventsOf(t, ok.id)).toEqual(['payment.succeeded']);
      const refund = await postLifecycle(t, ok.id, 'refund', {}, { transactionId: ok.transactions.id });
      expect(refund.status, await refund.clone().text()).toBe(200);
      expect((await getPayment(t, ok.id)).status).toBe('REFUNDED');
      // Not waiting for anyone: the sandbox has nothing to settle.
      await expectProblem(await outcome(t, ok.id, 'PAY'), 409, 'INVALID_STATUS');

      const declined = googlePay('0010');
      t.rememberSecret(declined.detail.wallet.payment_token, 'Google Pay token');
      const no = await create(t, 'GOOGLE_PAY', { payment_method: declined });
      expect([no.status, no.transactions.response_code, no.transactions_history!.length]).toEqual(['DECLINED', 'INSUFFICIENT_FUNDS', 1]);
      expect(await eventsOf(t, no.id)).toEqual(['payment.declined']);

      const erring = googlePay('0077');
      t.rememberSecret(erring.detail.wallet.payment_token, 'Google Pay token');
      const over = await create(t, 'GOOGLE_PAY', { payment_method: erring });
      expect(over.transactions_history!.map((x) => [x.provider_id, x.status])).toEqual([
        ['SANDBOX_A', 'ERROR'],
        ['SANDBOX_B', 'SUCCEEDED'],
      ]);
      expect(over.status).toBe('SUCCEEDED');

      const stored = (await t.db.query<{ d: Record<string, unknown> }>('SELECT request_details AS d FROM payments WHERE id = $1', [ok.id]))[0]!.d;
      expect(stored.wallet).toEqual({ card_last_four: '1515' });
      const all = await everywhere(t);
      for (const token of [approved, declined, erring].map((m) => m.detail.wallet.payment_token)) expect(all).not.toContain(JSON.parse(token).signature);

      // The token is required; a card's members are not for it.
      const missing = await expectProblem(await postPayment(t, body(t, 'GOOGLE_PAY', { payment_method: { type: 'GOOGLE_PAY' } })), 400, 'INVALID_REQUEST');
      expect(missing.errors).toEqual([{ path: '/body/payment_method/detail/wallet', message: 'is required with type GOOGLE_PAY' }]);
      const asCard = await expectProblem(await postPayment(t, body(t, 'CARD' as AsyncType, { payment_method: { type: 'CARD', detail: { wallet: approved.detail.wallet } } })), 400, 'INVALID_REQUEST');
      expect(asCard.errors).toEqual([{ path: '/body/payment_method/detail/wallet', message: 'is not allowed with type CARD' }]);
    });

    it('GOOGLE_PAY whose authorization answers late (last four 0085, SANDBOX_A past the connection timeout): no failover, PENDING / IN_PROCESS, then reconciliation takes the approval → SUCCEEDED with payment.succeeded', async () => {
      const creds = await t.createOrganization({ pciCertified: true });
      const headers = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const connections = (await (await t.fetch('/connections', { headers })).json()) as { connection_id: string; provider_id: string }[];
      const a = connections.find((c) => c.provider_id === 'SANDBOX_A')!;
      const patched = await t.fetch(`/connections/${a.connection_id}`, { method: 'PATCH', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ timeout_ms: 300 }) });
      expect(patched.status, await patched.clone().text()).toBe(200);
      const method = googlePay('0085');
      t.rememberSecret(method.detail.wallet.payment_token, 'Google Pay token');
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify({ ...body(t, 'GOOGLE_PAY', { payment_method: method }), account_id: creds.account_id }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const late = JSON.parse(text) as Created;
      // The token may have been charged at A: nobody else is asked, and the answer is looked up.
      expect([late.status, late.sub_status]).toEqual(['PENDING', 'IN_PROCESS']);
      expect(late.transactions_history!.map((x) => [x.provider_id, x.status])).toEqual([['SANDBOX_A', 'PENDING']]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const read = (await (await t.fetch(`/payments/${late.id}`, { headers })).json()) as Schemas['Payment'];
      expect([read.status, read.sub_status, read.amount.captured]).toEqual(['SUCCEEDED', 'APPROVED', 120.5]);
      expect(read.transactions.map((x) => [x.provider_id, x.status])).toEqual([['SANDBOX_A', 'SUCCEEDED']]);
      const events = (await (await t.fetch('/events?limit=100', { headers })).json()) as Schemas['EventList'];
      expect(events.events.filter((e) => (e.data as { payment?: { id?: string } }).payment?.id === late.id).map((e) => e.type_event)).toEqual(['payment.succeeded']);
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
