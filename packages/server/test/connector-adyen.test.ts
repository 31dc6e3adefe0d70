/**
 * The ADYEN connector end to end (issue 22 §5): a real server, a real database per backend, the Adyen double
 * (test/doubles/adyen) as Adyen, reached through the service's ADYEN_API_URL. Payments go through the public
 * API with the sandbox account's card routing sent to [ADYEN, SANDBOX_A] (sandbox mode is on in tests), so
 * every row of the code table shows whether it fails over. The double judges every request by Adyen's own
 * OpenAPI schemas; the last test asserts none was invalid.
 */
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADYEN_CODES, UNKNOWN_ERROR, UNKNOWN_REFUSAL } from '../src/providers/adyen/codes.js';
import { ProviderRefusedError, ProviderUnavailableError, type PaymentProvider } from '../src/providers/provider.js';
import { ADYEN_TEST_CREDENTIALS, type AdyenDouble } from './doubles/adyen/server.js';
import { adyenFilesPresent } from './doubles/adyen/schemas.js';
import { connectProvider, routeCards, useAdyenServer } from './support/connectors.js';
import { backends } from './support/harness.js';
import { authorizedPayment, CARDS, createCustomer, getPayment, paymentBody, postLifecycle, postPayment } from './support/payments.js';


/**
 * A connection timeout short enough for the timeout tests, long enough for a loaded machine: at 1.5 s the
 * file's first purchase went over it on a two-core machine at load 12 and failed over.
 */
const TIMEOUT_MS = 5000;

for (const backend of backends()) {
  describe(`ADYEN connector on ${backend}`, () => {
    const { t, setup } = useAdyenServer(backend, TIMEOUT_MS);
    let double: AdyenDouble;
    let adyenConnection: string;
    let sandboxConnection: string;
    let customerId: string;
    let adyen: PaymentProvider;
    beforeAll(async () => {
      ({ double, adyenConnection, sandboxConnection } = setup);
      await routeCards(t, [
        { provider_id: 'ADYEN', connection_id: adyenConnection },
        { provider_id: 'SANDBOX_A', connection_id: sandboxConnection },
      ]);
      customerId = await createCustomer(t);
      adyen = t.running.deps.services.providers.get('ADYEN')!;
    });

    const connection = () => ({ connectionId: adyenConnection, credentials: ADYEN_TEST_CREDENTIALS, timeoutMs: TIMEOUT_MS });

    async function pay(overrides: Parameters<typeof paymentBody>[2] = {}): Promise<Schemas['Payment']> {
      const res = await postPayment(t, paymentBody(t, customerId, overrides));
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return getPayment(t, (JSON.parse(text) as { id: string }).id);
    }
    const attempts = (p: Schemas['Payment']) => p.transactions.filter((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');

    it('purchase: approved at Adyen in minor units, our transaction id as merchant reference and Idempotency-Key, no card number in its log', async () => {
      const body = paymentBody(t, customerId, { amount: { currency: 'BRL', value: 150.5 } });
      (body.payment_method.detail!.card as { soft_descriptor?: string }).soft_descriptor = 'ACME*Order #1001 ção';
      const res = await postPayment(t, body);
      expect(res.status, await res.clone().text()).toBe(201);
      const p = await getPayment(t, ((await res.json()) as { id: string }).id);
      expect(p.status).toBe('SUCCEEDED');
      const tx = attempts(p);
      expect(tx).toHaveLength(1);
      const at = double.paymentByReference(tx[0]!.id)!;
      expect(at).toMatchObject({ authorised: 15050, captured: 15050, currency: 'BRL', manualCapture: false });
      expect(tx[0]!.provider_id).toBe('ADYEN');
      const sent = double.requests.find((r) => r.operation === 'payments' && (r.body as { reference?: string }).reference === tx[0]!.id)!;
      expect(sent.idempotencyKey).toBe(tx[0]!.id);
      expect(JSON.stringify(sent.body)).not.toContain(CARDS.approved);
      expect(sent.body).toMatchObject({ captureDelayHours: 0, shopperStatement: 'ACME*Order 1001 o', shopperInteraction: 'Ecommerce' });
    });

    it('zero-decimal currency: CLP goes out with the two decimals Adyen takes for it', async () => {
      const p = await pay({ amount: { currency: 'CLP', value: 12000 }, country: 'CL' });
      expect(p.status).toBe('SUCCEEDED');
      expect(double.paymentByReference(attempts(p)[0]!.id)).toMatchObject({ authorised: 1200000, currency: 'CLP' });
    });

    it('authorize, then a partial capture: Adyen holds the authorization (manualCapture) and captures the part', async () => {
      const created = await authorizedPayment(t, { amount: { currency: 'BRL', value: 100 } }, customerId);
      const p = await getPayment(t, created.id);
      const auth = attempts(p)[0]!;
      const at = double.paymentByReference(auth.id)!;
      expect(at).toMatchObject({ manualCapture: true, captured: 0, authorised: 10000 });
      const res = await postLifecycle(t, p.id, 'capture', { amount: { currency: 'BRL', value: 60 } }, { transactionId: auth.id });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      expect(at.captured).toBe(6000);
      const capture = (await getPayment(t, p.id)).transactions.find((x) => x.type === 'CAPTURE')!;
      expect(capture.status).toBe('SUCCEEDED');
      const sent = double.requests.find((r) => r.operation === 'captures' && r.idempotencyKey === capture.id)!;
      expect(sent.path).toBe(`/v72/payments/${at.pspReference}/captures`);
    });

    it('void: an uncaptured authorization is reversed at Adyen (cancelled, nothing was captured)', async () => {
      const created = await authorizedPayment(t, { amount: { currency: 'BRL', value: 30 } }, customerId);
      const auth = attempts(await getPayment(t, created.id))[0]!;
      const res = await postLifecycle(t, created.id, 'cancel', {}, { transactionId: auth.id });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      expect(double.paymentByReference(auth.id)).toMatchObject({ cancelled: true, reversed: true, refunded: 0 });
      expect((await getPayment(t, created.id)).status).toBe('CANCELED');
    });

    it('a partial then a full refund: both reach Adyen, whose ledger refuses more than was captured', async () => {
      const p = await pay({ amount: { currency: 'BRL', value: 80 } });
      const purchase = attempts(p)[0]!;
      const at = double.paymentByReference(purchase.id)!;
      const first = await postLifecycle(t, p.id, 'refund', { amount: { currency: 'BRL', value: 30 } }, { transactionId: purchase.id });
      expect(first.status, await first.clone().text()).toBeLessThan(300);
      expect(at.refunded).toBe(3000);
      const rest = await postLifecycle(t, p.id, 'refund', { amount: { currency: 'BRL', value: 50 } }, { transactionId: purchase.id });
      expect(rest.status, await rest.clone().text()).toBeLessThan(300);
      expect(at.refunded).toBe(8000);
      // Adyen's own ledger: nothing is left to refund (the adapter answers it as a declined refund).
      const over = await adyen.refund({ providerTransactionId: at.pspReference, amount: '1', currency: 'BRL', reference: crypto.randomUUID(), connection: connection() });
      expect(over).toMatchObject({ outcome: 'DECLINED', responseCode: 'REFUND_DECLINED' });
      expect(at.refunded).toBe(8000);
    });

    it('a retried call with the same reference never charges twice: Adyen answers the stored first answer', async () => {
      const reference = crypto.randomUUID();
      const charge = { card: { number: CARDS.approved, holderName: 'JOHN DOE', expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' }, amount: '10', currency: 'EUR', reference, description: 'retry', connection: connection() };
      const first = await adyen.purchase(charge);
      const again = await adyen.purchase(charge);
      expect(again.providerTransactionId).toBe(first.providerTransactionId);
      expect(double.processedCount(reference)).toBe(1);
      expect([...double.payments.values()].filter((x) => x.reference === reference)).toHaveLength(1);
    });

    // Every row, through the API: the double answers with the row's code; the ADYEN attempt carries the row's
    // response code, and the payment moved on to SANDBOX_A exactly when the row's decision is soft.
    const rows = ADYEN_CODES.map((row) => {
      const [code, mac] = row.providerCode.split(' + MAC ');
      return { row, code: code === UNKNOWN_REFUSAL ? '99' : code === UNKNOWN_ERROR ? '98' : code!, mac: mac ?? row.merchantAdviceCode ?? undefined };
    });
    it.each(rows)('code table row $row.providerCode → $row.responseCode, $row.decision', async ({ row, code, mac }) => {
      double.next(row.outcome === 'ERROR' ? { kind: 'error', code } : { kind: 'refuse', code, ...(mac ? { advice: mac } : {}) });
      const p = await pay();
      const [first, second] = attempts(p);
      expect(first!.response_code).toBe(row.responseCode);
      expect(first!.status).toBe(row.outcome === 'ERROR' ? 'ERROR' : 'DECLINED');
      if (row.decision === 'SOFT_FAILURE') {
        expect(second, 'failed over to SANDBOX_A').toBeDefined();
        expect(p.status).toBe('SUCCEEDED');
      } else {
        expect(second, 'the route stopped').toBeUndefined();
        expect(p.status).not.toBe('SUCCEEDED');
      }
    });

    it.each(['Received', 'Pending'])("a card answered %s is no final answer: the attempt stays PENDING for reconciliation (never a soft ERROR), the route moves on, and Adyen's stored undecided answer is never read as not processed", async (resultCode) => {
      double.next({ kind: 'resultCode', resultCode });
      const p = await pay();
      const [atAdyen, second] = attempts(p);
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'PENDING', response_code: 'PROVIDER_BAD_RESPONSE' });
      // The route moves on as after a timeout (docs/design.md: an unknown outcome fails over; a late approval is reversed).
      expect(second).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED' });
      expect(p.status).toBe('SUCCEEDED');
      expect(double.processedCount(atAdyen!.id)).toBe(1);
      // Reconciliation's replay gets Adyen's stored first answer, still undecided: asked again, the attempt PENDING.
      await reconcileNow(p.id);
      expect(attempts(await getPayment(t, p.id))[0]).toMatchObject({ id: atAdyen!.id, status: 'PENDING' });
      // Even past the settle window: Adyen processed the reference, so it is never "not processed".
      await t.db.query(`UPDATE payment_transactions SET created_at = created_at - interval '16 minutes' WHERE id = $1`, [atAdyen!.id]);
      await reconcileNow(p.id);
      expect(attempts(await getPayment(t, p.id))[0]).toMatchObject({ id: atAdyen!.id, status: 'PENDING' });
      expect(double.processedCount(atAdyen!.id)).toBe(1);
      // Leave nothing due for the tests after this one.
      await t.db.query(`UPDATE payment_transactions SET status = 'ERROR' WHERE id = $1`, [atAdyen!.id]);
    });

    /** As if the attempt's deadline had passed: the reconciliation takes it now. */
    async function reconcileNow(paymentId: string) {
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
    }

    it('a timeout leaves the attempt unknown; the route moves on; reconciliation finds the approval by replay and voids it at Adyen', async () => {
      double.next({ kind: 'timeout' });
      const p = await pay();
      const [first, second] = attempts(p);
      expect(first!.status).toBe('PENDING');
      expect(second?.status).toBe('SUCCEEDED');
      expect(p.status).toBe('SUCCEEDED');
      const at = double.paymentByReference(first!.id)!;
      expect(at.reversed).toBe(false);
      await reconcileNow(p.id);
      // The late purchase is reversed (Adyen's cancel-or-refund: captured at once, so refunded in full).
      expect(at).toMatchObject({ reversed: true, refunded: at.captured });
      expect(double.processedCount(first!.id)).toBe(1);
      const after = attempts(await getPayment(t, p.id));
      expect(after[0]!.status).not.toBe('PENDING');
    });

    it('only Adyen on the route: a timed-out approval is taken by reconciliation; a request that never arrived is asked again within the settle window, then found not processed, and the replay charges nothing', async () => {
      await routeCards(t, [{ provider_id: 'ADYEN', connection_id: adyenConnection }]);
      try {
        double.next({ kind: 'timeout' });
        const taken = await pay();
        expect(taken.status).toBe('PENDING');
        await reconcileNow(taken.id);
        expect((await getPayment(t, taken.id)).status).toBe('SUCCEEDED');

        double.next({ kind: 'lost' });
        const lost = await pay();
        expect(lost.status).toBe('PENDING');
        const reference = attempts(lost)[0]!.id;
        await reconcileNow(lost.id);
        // Not found, but the replay closes nothing at Adyen: "not yet" until the settle window has passed.
        expect(await getPayment(t, lost.id)).toMatchObject({ status: 'PENDING' });
        expect(attempts(await getPayment(t, lost.id))[0]).toMatchObject({ id: reference, status: 'PENDING' });
        await t.db.query(`UPDATE payment_transactions SET created_at = created_at - interval '16 minutes' WHERE id = $1`, [reference]);
        await reconcileNow(lost.id);
        const settled = await getPayment(t, lost.id);
        expect(attempts(settled)[0]).toMatchObject({ id: reference, status: 'ERROR', response_code: 'NOT_PROCESSED' });
        expect(settled.status).not.toBe('SUCCEEDED');
        expect(settled.status).not.toBe('PENDING');
        expect(double.processedCount(reference)).toBe(0);
        expect(double.paymentByReference(reference)).toBeUndefined();
        // The replay went out card-less, under the same key.
        const replay = double.requests.filter((r) => r.idempotencyKey === reference).at(-1)!;
        expect((replay.body as { paymentMethod: Record<string, unknown> }).paymentMethod).toEqual({ type: 'scheme' });
      } finally {
        await routeCards(t, [
          { provider_id: 'ADYEN', connection_id: adyenConnection },
          { provider_id: 'SANDBOX_A', connection_id: sandboxConnection },
        ]);
      }
    });

    it('an oversized answer is BAD_RESPONSE (the adapter reads at most 64 KiB), and the payment moves on', async () => {
      double.next({ kind: 'oversized' });
      const err = await adyen
        .purchase({ card: { number: CARDS.approved, holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' }, amount: '5', currency: 'EUR', reference: crypto.randomUUID(), description: 'big', connection: connection() })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect((err as ProviderUnavailableError).kind).toBe('BAD_RESPONSE');
      // Through the API on a connection of its own: its circuit is closed whatever earlier tests' late answers
      // did to the shared connection's (a skipped step would leave the queued failure for the next test).
      const fresh = await connectProvider(t, { providerId: 'ADYEN', credentials: ADYEN_TEST_CREDENTIALS, timeoutMs: TIMEOUT_MS });
      await routeCards(t, [
        { provider_id: 'ADYEN', connection_id: fresh },
        { provider_id: 'SANDBOX_A', connection_id: sandboxConnection },
      ]);
      try {
        double.next({ kind: 'fail' });
        const p = await pay();
        expect(attempts(p)).toHaveLength(2);
        expect(p.status).toBe('SUCCEEDED');
      } finally {
        await routeCards(t, [
          { provider_id: 'ADYEN', connection_id: adyenConnection },
          { provider_id: 'SANDBOX_A', connection_id: sandboxConnection },
        ]);
      }
    });

    it('forwardDisputeEvidence supplies every document under the dispute and defends it (Disputes API), through the connection', async () => {
      // The disputed payment, made at Adyen directly (a payment through the API may skip a circuit opened by the test before).
      const reference = crypto.randomUUID();
      await adyen.purchase({ card: { number: CARDS.approved, holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' }, amount: '20', currency: 'EUR', reference, description: 'disputed', connection: connection() });
      const at = double.paymentByReference(reference)!;
      const disputeId = double.openDispute(at.pspReference);
      const pdf = Buffer.from('%PDF-1.4\n% receipt\n');
      const { createHash } = await import('node:crypto');
      const evidence = ['receipt.pdf', 'delivery.pdf'].map((fileName, i) => ({
        id: `ev_${i}`,
        fileName,
        contentType: 'application/pdf',
        category: 'RECEIPT',
        sha256: createHash('sha256').update(pdf).digest('hex'),
        content: pdf,
      }));
      const input = { reference: crypto.randomUUID(), disputeId: 'd1', paymentId: reference, chargebackId: disputeId, evidence, connection: connection() };
      const ack = await adyen.forwardDisputeEvidence(input);
      expect(ack.providerDisputeId).toBe(disputeId);
      const d = double.disputes.get(disputeId)!;
      expect(d.documents.map((x) => x.defenseDocumentTypeCode)).toEqual(['TIDorInvoice', 'GoodsDeliveredOrServicesRendered']);
      expect(d.documents.every((x) => x.bytes === pdf.length)).toBe(true);
      expect(d.defenseReasonCode).toBe('GoodsOrServicesProvided');
      // Forwarded again under the same reference: Adyen's stored answers, no second set of documents.
      await adyen.forwardDisputeEvidence(input);
      expect(d.documents).toHaveLength(2);
    });

    it('forwardDisputeEvidence: a refusal for good (HTTP 400/422, success false: defended, closed) is a ProviderRefusedError; 704 in progress, 403, 404, 429, 500 are retried', async () => {
      const reference = crypto.randomUUID();
      await adyen.purchase({ card: { number: CARDS.approved, holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' }, amount: '20', currency: 'EUR', reference, description: 'disputed', connection: connection() });
      const disputeId = double.openDispute(double.paymentByReference(reference)!.pspReference);
      const pdf = Buffer.from('%PDF-1.4\n% receipt\n');
      const forward = () =>
        adyen.forwardDisputeEvidence({
          reference: crypto.randomUUID(),
          disputeId: 'd1',
          paymentId: reference,
          chargebackId: disputeId,
          evidence: [{ id: 'ev_0', fileName: 'receipt.pdf', contentType: 'application/pdf', category: 'RECEIPT', sha256: 'x'.repeat(64), content: pdf }],
          connection: connection(),
        });
      const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
      // Retried: Adyen still processing the key (422 errorCode 704), permissions, no such endpoint, a rate limit, a 5xx.
      for (const [status, errorCode] of [[422, '704'], [403, '010'], [404, '000'], [429, '000']] as const) {
        double.next({ kind: 'status', status, errorCode }, { operation: 'supplyDefenseDocument' });
        const err = await failure(forward());
        expect(err, `${status} ${errorCode}`).toBeInstanceOf(ProviderUnavailableError);
      }
      double.next({ kind: 'fail' }, { operation: 'defendDispute' });
      expect(await failure(forward())).toBeInstanceOf(ProviderUnavailableError);
      // For good: a validation error, a bad request.
      for (const status of [422, 400]) {
        double.next({ kind: 'status', status, errorCode: '000' }, { operation: 'supplyDefenseDocument' });
        expect(await failure(forward())).toEqual(new ProviderRefusedError('ADYEN', `ADYEN refused the evidence (HTTP ${status} errorCode 000)`));
      }
      // A forward that goes through defends the dispute; after that no more documents; once closed, nothing more.
      await forward();
      expect(double.disputes.get(disputeId)).toMatchObject({ status: 'Pending' });
      expect(await failure(forward())).toEqual(new ProviderRefusedError('ADYEN', 'ADYEN refused the defense documents (disputeServiceResult success false)'));
      double.closeDispute(disputeId, 'Lost');
      expect(await failure(forward())).toEqual(new ProviderRefusedError('ADYEN', 'ADYEN refused the defense reasons (disputeServiceResult success false)'));
    });

    it('a late answer within the connection timeout is an answer', async () => {
      double.next({ kind: 'late', ms: 300 });
      const reference = crypto.randomUUID();
      const r = await adyen.purchase({ card: { number: CARDS.approved, holderName: null, expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' }, amount: '7', currency: 'EUR', reference, description: 'late', connection: connection() });
      expect(r.outcome).toBe('SUCCEEDED');
      expect(double.processedCount(reference)).toBe(1);
    });

    it('a capture whose answer never came is settled by reconciliation: the replay under its key returns the stored capture answer', async () => {
      const created = await authorizedPayment(t, { amount: { currency: 'BRL', value: 40 } }, customerId);
      const auth = attempts(await getPayment(t, created.id))[0]!;
      expect(auth.provider_id).toBe('ADYEN');
      double.next({ kind: 'timeout' }, { operation: 'captures' });
      const res = await postLifecycle(t, created.id, 'capture', { amount: { currency: 'BRL', value: 40 } }, { transactionId: auth.id });
      expect([200, 201, 502]).toContain(res.status);
      const pending = (await getPayment(t, created.id)).transactions.find((x) => x.type === 'CAPTURE')!;
      expect(pending.status).toBe('PENDING');
      expect(double.paymentByReference(auth.id)!.captured).toBe(4000);
      await reconcileNow(created.id);
      const capture = (await getPayment(t, created.id)).transactions.find((x) => x.type === 'CAPTURE')!;
      expect(capture.status).toBe('SUCCEEDED');
      // Captured once: the replay was answered from Adyen's stored answer.
      expect(double.requests.filter((r) => r.operation === 'captures' && r.idempotencyKey === capture.id)).toHaveLength(1);
      expect(double.paymentByReference(auth.id)!.captured).toBe(4000);
    });

    it.skipIf(!adyenFilesPresent())("every request the double received was valid under Adyen's OpenAPI documents", () => {
      expect(double.requests.length).toBeGreaterThan(ADYEN_CODES.length);
      expect(double.invalidRequests()).toEqual([]);
    });

    it('the double kept no card number nor security code of the payments it received', () => {
      const log = JSON.stringify(double.requests);
      for (const pan of Object.values(CARDS)) expect(log).not.toContain(pan);
      expect(log).not.toMatch(/"cvc":"\d/);
    });
  });
}
