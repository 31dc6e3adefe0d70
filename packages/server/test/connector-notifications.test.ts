/**
 * Issue 22 §5's notification and dispute items, per connector (STRIPE, ADYEN, MERCADO_PAGO), end to end
 * through the public API on each database backend, as a merchant would: a connection made with
 * POST /v1/connections (credentials in the provider's shape), the sandbox account's card routing pointed at
 * it, a purchase, then the provider's own signed notifications (built by its double) posted to
 * /v1/provider-notifications/{connection_id}:
 *   - a refund confirmed, another failed (its amount refundable again, payment.operation.failed listed);
 *   - a chargeback → IN_DISPUTE; the merchant's evidence reaches the provider's double through the outbox
 *     (forwarded to the connection that holds the chargeback, deleted by then); the outcome closes the dispute;
 *   - a re-delivery changes nothing twice; a bad signature is 401 and changes nothing.
 * One server per backend and the three doubles, started once. The adapters' own notification parsing is
 * tested row by row in connector-<name>-units.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADYEN_TEST_CREDENTIALS, startAdyenDouble, type AdyenDouble } from './doubles/adyen/server.js';
import { startMercadoPagoDouble, type MercadoPagoDouble } from './doubles/mercado-pago/server.js';
import { startStripeDouble, type StripeDouble } from './doubles/stripe/server.js';
import { settleFollowUpByReconciliation } from '../src/payments/lifecycle.js';
import { CONNECTORS as CONNECTOR_KIT } from '../src/providers/connectors.js';
import { expectProblem } from './support/assertions.js';
import { routeCards } from './support/connectors.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, evidence, getPayment, paymentBody, postDispute, postLifecycle, postPayment } from './support/payments.js';

type Payment = Schemas['Payment'];
type Transaction = Schemas['Transaction'];
interface Signed {
  body: string;
  headers: Record<string, string>;
}
type Outcome = 'WON' | 'LOST';

const json = { 'content-type': 'application/json' };
const VALUE = 120; // BRL
const minor = (value: number) => Math.round(value * 100);

interface Doubles {
  stripe: StripeDouble;
  adyen: AdyenDouble;
  mp: MercadoPagoDouble;
}

/** What the test needs of one connector: its credentials, and its provider's notifications for a payment. */
interface Connector {
  id: 'STRIPE' | 'ADYEN' | 'MERCADO_PAGO';
  /** Credentials in the provider's shape; `secrets` are the fields the teardown scan must never find. */
  credentials(d: Doubles): { credentials: Record<string, string>; secrets: string[] };
  /** Set up before the payment (e.g. refunds accepted in process). */
  prepare?(d: Doubles, credentials: Record<string, string>): void;
  /** The provider's word that `refund` (the payment's newest) went through, or did not. */
  refundSettled(d: Doubles, c: Record<string, string>, payment: Payment, refund: Transaction, outcome: 'CONFIRMED' | 'FAILED'): Signed;
  /** A chargeback of the payment, as the provider announces it; returns the provider's case id. */
  chargeback(d: Doubles, c: Record<string, string>, payment: Payment): { signed: Signed; caseId: string };
  /** What the provider's double received as evidence for the case (file names or document types). */
  evidenceAt(d: Doubles, caseId: string): { documents: number; submitted: boolean };
  /**
   * Closes the case at the provider (decided there, its notification not sent yet), so that it refuses more
   * evidence for good; `refusal` is what the given-up batch's last_error then says. Not Stripe's (its refusal
   * is a second submission, tested on its own).
   */
  closed?: { close(d: Doubles, caseId: string): void; refusal: RegExp };
  /** Evidence calls the provider's double received for the case, whatever it answered. */
  evidenceCalls(d: Doubles, caseId: string): number;
  outcome: Outcome;
  /** The case decided, as the provider announces it. */
  decided(d: Doubles, c: Record<string, string>, payment: Payment, caseId: string): Signed;
  /** A notification signed with another secret. */
  forged(d: Doubles, payment: Payment): Signed;
  /** The acknowledgement body the provider expects, when it expects one. */
  ack?: string;
}

const purchaseOf = (p: Payment) => p.transactions.find((x) => x.type === 'PURCHASE' && x.status === 'SUCCEEDED')!;
const providerIdOf = (x: Transaction) => x.provider_data.transaction_id!;

const stripeIntentOf = (d: Doubles, paymentId: string) => [...d.stripe.ledger.intents.values()].find((pi) => pi.metadata.payorch_payment_id === paymentId && pi.status === 'succeeded')!;

const CONNECTORS: Connector[] = [
  {
    id: 'STRIPE',
    credentials() {
      const c = { secret_key: `sk_test_${randomBytes(16).toString('hex')}`, webhook_secret: `whsec_${randomBytes(16).toString('hex')}` };
      return { credentials: c, secrets: [c.secret_key, c.webhook_secret] };
    },
    refundSettled(d, c, _payment, refund, outcome) {
      const refundId = providerIdOf(refund);
      d.stripe.settleRefund(refundId, outcome === 'CONFIRMED' ? 'succeeded' : 'failed');
      return d.stripe.signedNotification(outcome === 'CONFIRMED' ? 'refund.updated' : 'refund.failed', { refundId }, c.webhook_secret!);
    },
    chargeback(d, c, payment) {
      const disputeId = d.stripe.openDispute(stripeIntentOf(d, payment.id).id, { amount: minor(VALUE) });
      return { signed: d.stripe.signedNotification('charge.dispute.created', { disputeId }, c.webhook_secret!), caseId: disputeId };
    },
    evidenceAt(d, caseId) {
      const dispute = d.stripe.ledger.disputes.get(caseId)!;
      // File fields hold a file id (uncategorized_text lists them too, as text).
      const files = Object.values(dispute.evidence).filter((v) => typeof v === 'string' && /^file_\w+$/.test(v) && d.stripe.ledger.files.has(v));
      return { documents: files.length, submitted: dispute.status === 'under_review' };
    },
    evidenceCalls(d, caseId) {
      return d.stripe.ledger.disputes.get(caseId)!.submissionCount;
    },
    outcome: 'WON',
    decided(d, c, _payment, caseId) {
      d.stripe.closeDispute(caseId, 'won');
      return d.stripe.signedNotification('charge.dispute.closed', { disputeId: caseId }, c.webhook_secret!);
    },
    forged(d, payment) {
      return d.stripe.signedNotification('charge.dispute.created', { paymentId: payment.id }, `whsec_${randomBytes(16).toString('hex')}`);
    },
  },
  {
    id: 'ADYEN',
    credentials() {
      // The double has one merchant account: its API key and HMAC key are the connection's.
      return { credentials: { ...ADYEN_TEST_CREDENTIALS }, secrets: [ADYEN_TEST_CREDENTIALS.api_key, ADYEN_TEST_CREDENTIALS.hmac_key] };
    },
    refundSettled(d, _c, payment, refund, outcome) {
      // A failed refund moved no money: Adyen's books (the double's ledger) have it refundable again.
      if (outcome === 'FAILED') d.adyen.payments.get(providerIdOf(purchaseOf(payment)))!.refunded -= minor(refund.amount);
      const target = { pspReference: providerIdOf(refund), originalReference: providerIdOf(purchaseOf(payment)), merchantReference: refund.id, value: minor(refund.amount), currency: 'BRL' };
      return d.adyen.signedNotification(outcome === 'CONFIRMED' ? 'REFUND' : 'REFUND_FAILED', target);
    },
    chargeback(d, _c, payment) {
      const purchase = purchaseOf(payment);
      const disputePsp = d.adyen.openDispute(providerIdOf(purchase));
      const target = { pspReference: disputePsp, originalReference: providerIdOf(purchase), merchantReference: purchase.id, value: minor(VALUE), currency: 'BRL' };
      return { signed: d.adyen.signedNotification('NOTIFICATION_OF_CHARGEBACK', target, { additionalData: { chargebackReasonCode: '10.4', disputeStatus: 'Undefended' } }), caseId: disputePsp };
    },
    evidenceAt(d, caseId) {
      const dispute = d.adyen.disputes.get(caseId)!;
      return { documents: dispute.documents.length, submitted: dispute.defenseReasonCode !== null };
    },
    closed: {
      // Decided at Adyen: its Disputes API answers success false (the defense reasons, the first call).
      close: (d, caseId) => d.adyen.closeDispute(caseId, 'Lost'),
      refusal: /ADYEN refused the defense reasons \(disputeServiceResult success false\)/,
    },
    evidenceCalls(d, caseId) {
      return d.adyen.requests.filter((r) => r.operation !== null && r.operation !== 'payments' && (r.body as { disputePspReference?: string } | undefined)?.disputePspReference === caseId).length;
    },
    outcome: 'LOST',
    decided(d, _c, payment, caseId) {
      const purchase = purchaseOf(payment);
      const target = { pspReference: caseId, originalReference: providerIdOf(purchase), merchantReference: purchase.id, value: minor(VALUE), currency: 'BRL' };
      return d.adyen.signedNotification('CHARGEBACK', target, { additionalData: { chargebackReasonCode: '10.4', disputeStatus: 'Lost' } });
    },
    forged(d, payment) {
      const purchase = purchaseOf(payment);
      const target = { pspReference: 'DISP0000FORGED01', originalReference: providerIdOf(purchase), merchantReference: purchase.id, value: minor(VALUE), currency: 'BRL' };
      return d.adyen.signedNotification('NOTIFICATION_OF_CHARGEBACK', target, { hmacKey: randomBytes(32).toString('hex').toUpperCase() });
    },
    ack: '[accepted]',
  },
  {
    id: 'MERCADO_PAGO',
    credentials(d) {
      const c = d.mp.account();
      return { credentials: { ...c }, secrets: [c.access_token, c.webhook_secret] };
    },
    // Refunds accepted in process, so the notification is what confirms or fails them.
    prepare: (d, c) => d.mp.behave(c.access_token!, { asyncRefunds: true }),
    refundSettled(d, _c, payment, refund, outcome) {
      d.mp.settleRefund(Number(providerIdOf(refund)), outcome === 'CONFIRMED' ? 'approved' : 'rejected');
      return d.mp.signedNotification('payment', providerIdOf(purchaseOf(payment)));
    },
    chargeback(d, _c, payment) {
      const cb = d.mp.openChargeback(Number(providerIdOf(purchaseOf(payment))));
      return { signed: d.mp.signedNotification('chargeback', cb.id), caseId: cb.id };
    },
    evidenceAt(d, caseId) {
      const docs = d.mp.documentation(caseId);
      return { documents: docs.length, submitted: docs.length > 0 };
    },
    closed: {
      // Decided at Mercado Pago: the chargeback takes no more documentation (HTTP 400).
      close: (d, caseId) => d.mp.decideChargeback(caseId, 'WON'),
      refusal: /MERCADO_PAGO refused the evidence \(HTTP 400 bad_request\)/,
    },
    evidenceCalls(d, caseId) {
      return d.mp.requests.filter((r) => r.method === 'POST' && r.path === `/v1/chargebacks/${caseId}/documentation`).length;
    },
    outcome: 'WON',
    decided(d, _c, _payment, caseId) {
      d.mp.decideChargeback(caseId, 'WON');
      return d.mp.signedNotification('chargeback', caseId);
    },
    forged(d, payment) {
      return d.mp.signedNotification('payment', providerIdOf(purchaseOf(payment)), { secret: randomBytes(32).toString('hex') });
    },
  },
];

/** Everything a notification could change about a payment. */
async function footprint(t: TestServer, paymentId: string): Promise<Record<string, unknown>> {
  const rows = await t.db.query<Record<string, unknown>>(
    `SELECT p.status, p.sub_status, p.amount_refunded::text AS refunded, p.updated_at::text AS updated,
            (SELECT count(*)::int FROM payment_transactions WHERE payment_id = p.id) AS transactions,
            (SELECT max(updated_at)::text FROM payment_transactions WHERE payment_id = p.id) AS transaction_updated,
            (SELECT count(*)::int FROM payment_history WHERE payment_id = p.id) AS history,
            (SELECT count(*)::int FROM webhook_events WHERE resource_id = p.id) AS events
       FROM payments p WHERE p.id = $1`,
    [paymentId],
  );
  return rows[0]!;
}

async function ok<T = Payment>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

for (const backend of backends()) {
  describe(`provider notifications and dispute evidence per connector, on ${backend}`, () => {
    const doubles = {} as Doubles;
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      [doubles.stripe, doubles.adyen, doubles.mp] = await Promise.all([startStripeDouble(), startAdyenDouble(), startMercadoPagoDouble()]);
      Object.assign(env, { STRIPE_API_URL: doubles.stripe.url, ADYEN_API_URL: doubles.adyen.url, MERCADO_PAGO_API_URL: doubles.mp.url });
    });
    const t = useServer(backend, { env });
    afterAll(async () => {
      await Promise.all([doubles.stripe?.close(), doubles.adyen?.close(), doubles.mp?.close()]);
    });

    let customerId: string;
    beforeAll(async () => {
      customerId = await createCustomer(t);
    });

    const notify = (connectionId: string, signed: Signed) =>
      t.fetch(`/provider-notifications/${connectionId}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });

    for (const connector of CONNECTORS) {
      describe(connector.id, () => {
        let connectionId: string;
        let credentials: Record<string, string>;

        /** Delivered and acknowledged (Adyen's `[accepted]` body checked over HTTP). */
        async function delivered(signed: Signed): Promise<void> {
          const res = await notify(connectionId, signed);
          const text = await res.text();
          expect(res.status, text).toBe(200);
          if (connector.ack !== undefined) expect(text).toBe(connector.ack);
        }

        async function purchase(): Promise<Payment> {
          await routeCards(t, [{ provider_id: connector.id, connection_id: connectionId }]);
          const created = await ok<{ id: string }>(await postPayment(t, paymentBody(t, customerId, { amount: { currency: 'BRL', value: VALUE } })), 201);
          const payment = await getPayment(t, created.id);
          expect(payment).toMatchObject({ status: 'SUCCEEDED' });
          expect(purchaseOf(payment)).toMatchObject({ provider_id: connector.id });
          return payment;
        }

        beforeAll(async () => {
          const made = connector.credentials(doubles);
          credentials = made.credentials;
          for (const s of made.secrets) t.rememberSecret(s, `${connector.id} credential`);
          const created = await ok<Schemas['Connection']>(
            await t.fetch('/connections', {
              method: 'POST',
              headers: { ...json, 'x-idempotency-key': randomUUID() },
              body: JSON.stringify({ provider_id: connector.id, name: `${connector.id} notifications`, environment: 'TEST', credentials }),
            }),
            201,
          );
          connectionId = created.connection_id;
          connector.prepare?.(doubles, credentials);
        });

        it('a refund confirmed by notification stays; another failed by notification is undone and announced', async () => {
          const payment = await purchase();
          const purchaseId = purchaseOf(payment).id;
          const refund = async (value: number) => {
            const p = await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value } }, { transactionId: purchaseId }));
            const last = p.transactions.at(-1)!;
            expect(last).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', provider_id: connector.id });
            return { p, refund: last };
          };

          const first = await refund(20);
          await delivered(connector.refundSettled(doubles, credentials, first.p, first.refund, 'CONFIRMED'));
          expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 20 } });

          const second = await refund(30);
          expect(second.p.amount).toMatchObject({ refunded: 50 });
          const failed = connector.refundSettled(doubles, credentials, second.p, second.refund, 'FAILED');
          await delivered(failed);
          const after = await getPayment(t, payment.id);
          expect(after).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 20 } });
          expect(after.transactions.find((x) => x.id === first.refund.id)).toMatchObject({ status: 'SUCCEEDED' });
          expect(after.transactions.find((x) => x.id === second.refund.id)).toMatchObject({ status: 'DECLINED', response_code: 'FAILED_AT_PROVIDER' });

          // The merchant hears of it once, however often the provider delivers it.
          const before = await footprint(t, payment.id);
          await delivered(failed);
          expect(await footprint(t, payment.id)).toEqual(before);
          const events = await ok<Schemas['EventList']>(await t.fetch('/events?type=payment.operation.failed'));
          const mine = events.events.filter((e) => (e.data as unknown as { payment: { id: string } }).payment.id === payment.id);
          expect(mine).toHaveLength(1);
          expect((mine[0]!.data as unknown as { transaction: { id: string } }).transaction.id).toBe(second.refund.id);

          // What failed is refundable again: the rest of the payment, 100.
          expect(await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: VALUE - 20 } }, { transactionId: purchaseId }))).toMatchObject({
            status: 'REFUNDED',
            amount: { refunded: VALUE },
          });
        });

        it.runIf(connector.id === 'ADYEN')(
          'a refund settled as not processed and confirmed late by the provider: announced failed, then applied late (refunded, payment.refunded) while the payment can take it; once refunded again, left as recorded with an error log (no double count)',
          async () => {
            const payment = await purchase();
            const purchaseId = purchaseOf(payment).id;
            const { reconciliation } = t.running.deps.services.orchestration;
            const operationFailed = async () =>
              (await ok<Schemas['EventList']>(await t.fetch('/events?type=payment.operation.failed'))).events
                .map((e) => e.data as unknown as { payment: Payment; transaction: Transaction })
                .filter((d) => d.payment.id === payment.id)
                .map((d) => d.transaction);
            /** A refund Adyen answers HTTP 500 (nothing processed then): 502, then "not found" past the settle window. */
            const notProcessed = async (value: number): Promise<Transaction> => {
              doubles.adyen.next({ kind: 'fail' }, { operation: 'refunds' });
              await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value } }, { transactionId: purchaseId }), 502, 'PROVIDER_UNAVAILABLE');
              const pending = (await getPayment(t, payment.id)).transactions.at(-1)!;
              expect(pending).toMatchObject({ type: 'REFUND', status: 'PENDING' });
              // RECONCILIATION_NOT_FOUND_SETTLE_MS (15 minutes) has passed since it was sent.
              await t.db.query(`UPDATE payment_transactions SET created_at = created_at - interval '16 minutes', reconcile_after = clock_timestamp() WHERE id = $1`, [pending.id]);
              await reconciliation.runOnce();
              const settled = (await getPayment(t, payment.id)).transactions.find((x) => x.id === pending.id)!;
              expect(settled).toMatchObject({ status: 'ERROR', response_code: 'NOT_PROCESSED' });
              return settled;
            };
            /** Adyen's REFUND success for it, as if it had processed the refund after all. */
            const confirmedLate = (refund: Transaction) =>
              doubles.adyen.signedNotification('REFUND', {
                pspReference: `L${randomBytes(8).toString('hex').toUpperCase().slice(0, 15)}`,
                originalReference: providerIdOf(purchaseOf(payment)),
                merchantReference: refund.id,
                value: minor(refund.amount),
                currency: 'BRL',
              });

            const first = await notProcessed(20);
            expect((await operationFailed()).map((x) => x.id)).toEqual([first.id]);
            const late = confirmedLate(first);
            await delivered(late);
            const taken = await getPayment(t, payment.id);
            expect(taken).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 20 } });
            expect(taken.transactions.find((x) => x.id === first.id)).toMatchObject({ status: 'SUCCEEDED' });
            const once = await footprint(t, payment.id);
            await delivered(late);
            expect(await footprint(t, payment.id)).toEqual(once);
            const types = (await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id])).map((r) => r.type);
            expect(types).toEqual(['payment.succeeded', 'payment.operation.failed', 'payment.refunded']);

            // The rest (100) not processed, refunded again by the merchant; then Adyen confirms the first try too.
            const lost = await notProcessed(VALUE - 20);
            expect(await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchaseId }))).toMatchObject({ status: 'REFUNDED', amount: { refunded: VALUE } });
            const before = await footprint(t, payment.id);
            await delivered(confirmedLate(lost));
            expect(await footprint(t, payment.id)).toEqual(before);
            expect((await getPayment(t, payment.id)).transactions.find((x) => x.id === lost.id)).toMatchObject({ status: 'ERROR', response_code: 'NOT_PROCESSED' });
            const alarm = t.logs.find((l) => l.includes(lost.id) && l.includes('"level":50') && l.includes('money moved that the payment does not show'));
            expect(alarm, 'the late confirmation that cannot be applied is logged as an error').toBeDefined();
          },
        );

        it.runIf(connector.id === 'ADYEN')(
          "a refund's answer that arrives after reconciliation recorded it not processed is not dropped: Adyen's approval is applied (200, refunded, payment.refunded), with a warning",
          async () => {
            const payment = await purchase();
            doubles.adyen.next({ kind: 'late', ms: 1_500 }, { operation: 'refunds' });
            const reply = postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchaseOf(payment).id });
            let pending: Transaction | undefined;
            while (!pending) {
              pending = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'REFUND' && x.status === 'PENDING');
              if (!pending) await new Promise((r) => setTimeout(r, 20));
            }
            // Meanwhile (the request stalled past its deadline) reconciliation gave up on it: not processed.
            await t.db.transaction((tx) => settleFollowUpByReconciliation(tx, pending.id, { kind: 'not_processed' }));
            expect((await getPayment(t, payment.id)).transactions.find((x) => x.id === pending.id)).toMatchObject({ status: 'ERROR', response_code: 'NOT_PROCESSED' });

            const answered = await ok(await reply);
            expect(answered).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 10 } });
            expect(answered.transactions.find((x) => x.id === pending.id)).toMatchObject({ status: 'SUCCEEDED' });
            const types = (await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id])).map((r) => r.type);
            expect(types).toEqual(['payment.succeeded', 'payment.operation.failed', 'payment.refunded']);
            expect(t.logs.find((l) => l.includes(pending.id) && l.includes('"level":40') && l.includes('applied late'))).toBeDefined();
          },
        );

        /** The payment's evidence batches in the outbox, oldest first. */
        const evidenceMessages = (paymentId: string) =>
          t.db.query<{ id: string; delivered_at: string | null; given_up_at: string | null; last_error: string | null; attempts: number }>(
            "SELECT id, delivered_at, given_up_at, last_error, attempts FROM outbox WHERE topic = 'dispute.evidence' AND payload->>'payment_id' = $1 ORDER BY created_at",
            [paymentId],
          );
        /** Runs the outbox until the payment has `n` evidence batches, each delivered or given up. */
        const settledEvidence = async (paymentId: string, n: number) => {
          for (let i = 0; i < 100; i++) {
            await t.running.deps.services.payments.outbox.runOnce();
            const rows = await evidenceMessages(paymentId);
            if (rows.length === n && rows.every((m) => m.delivered_at !== null || m.given_up_at !== null)) return rows;
            await new Promise((r) => setTimeout(r, 20));
          }
          return evidenceMessages(paymentId);
        };

        const takesMoreEvidence = CONNECTOR_KIT.find((c) => c.id === connector.id)!.capabilities.features.additionalEvidence;
        it(
          takesMoreEvidence
            ? `${connector.id} takes evidence after the first batch: a PATCH's documents are forwarded too`
            : `${connector.id} takes a dispute's evidence once: a PATCH after the POST answers 409 INVALID_STATUS and adds nothing (no document, no batch, the provider's evidence untouched)`,
          async () => {
            const payment = await purchase();
            const { signed, caseId } = connector.chargeback(doubles, credentials, payment);
            await delivered(signed);
            const chargeback = (await getPayment(t, payment.id)).transactions.at(-1)!;
            await ok(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }));
            expect((await settledEvidence(payment.id, 1))[0]!.delivered_at).not.toBeNull();
            expect(connector.evidenceAt(doubles, caseId)).toEqual({ documents: 1, submitted: true });
            const stored = async () =>
              (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1', [payment.id]))[0]!.n;
            const before = await getPayment(t, payment.id);

            const patch = await postDispute(t, payment.id, chargeback.id, { evidence: [evidence({ file_name: 'again.pdf' })] }, { method: 'PATCH' });
            if (takesMoreEvidence) {
              await ok(patch);
              const batches = await settledEvidence(payment.id, 2);
              expect(batches.map((m) => m.delivered_at !== null)).toEqual([true, true]);
              expect(connector.evidenceAt(doubles, caseId).documents).toBe(2);
              return;
            }
            const body = await expectProblem(patch, 409, 'INVALID_STATUS');
            expect(body.detail).toContain(`held by ${connector.id}, which takes a dispute's evidence once`);
            expect(await stored()).toBe(1);
            expect(await evidenceMessages(payment.id)).toHaveLength(1);
            expect(await getPayment(t, payment.id)).toEqual(before);
            await t.running.deps.services.payments.outbox.runOnce();
            expect(connector.evidenceAt(doubles, caseId)).toEqual({ documents: 1, submitted: true });
          },
        );

        it.runIf(connector.closed !== undefined)(
          `${connector.id} refuses evidence for a case it has closed for good: the batch is given up (recorded, logged as an error), never sent again`,
          async () => {
            const payment = await purchase();
            const { signed, caseId } = connector.chargeback(doubles, credentials, payment);
            await delivered(signed);
            const chargeback = (await getPayment(t, payment.id)).transactions.at(-1)!;
            // Decided at the provider; its notification has not arrived: the dispute is still open here.
            connector.closed!.close(doubles, caseId);
            await ok(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence()] }));

            const [batch] = await settledEvidence(payment.id, 1);
            expect(batch).toMatchObject({ delivered_at: null, attempts: 1 });
            expect(batch!.given_up_at).not.toBeNull();
            expect(batch!.last_error).toMatch(connector.closed!.refusal);
            const refusedLog = t.logs.find((l) => l.includes(batch!.id) && l.includes('"level":50') && l.includes('outbox message refused by its recipient; given up, not retried'));
            expect(refusedLog, 'the give-up is logged as an error').toBeDefined();
            const calls = connector.evidenceCalls(doubles, caseId);
            expect(calls).toBeGreaterThan(0);

            // Not retried: later passes neither claim it nor call the provider.
            await t.running.deps.services.payments.outbox.runOnce();
            await t.running.deps.services.payments.outbox.runOnce();
            expect((await evidenceMessages(payment.id))[0]).toMatchObject({ attempts: 1, delivered_at: null });
            expect(connector.evidenceCalls(doubles, caseId)).toBe(calls);
            expect(connector.evidenceAt(doubles, caseId).documents).toBe(0);
          },
        );

        it(`a chargeback by notification → IN_DISPUTE; the evidence reaches ${connector.id}; the outcome (${connector.outcome}) closes it; re-deliveries and forgeries change nothing`, async () => {
          const payment = await purchase();

          // Forged: 401, nothing read or changed.
          const untouched = await footprint(t, payment.id);
          expect((await notify(connectionId, connector.forged(doubles, payment))).status).toBe(401);
          expect(await footprint(t, payment.id)).toEqual(untouched);

          const { signed, caseId } = connector.chargeback(doubles, credentials, payment);
          await delivered(signed);
          const disputed = await getPayment(t, payment.id);
          expect(disputed).toMatchObject({ status: 'IN_DISPUTE', sub_status: 'RECEIVED' });
          const chargeback = disputed.transactions.at(-1)!;
          expect(chargeback).toMatchObject({ type: 'CHARGEBACK', status: 'CREATED', provider_id: connector.id, amount: VALUE });
          const once = await footprint(t, payment.id);
          await delivered(signed);
          expect(await footprint(t, payment.id)).toEqual(once);

          // The merchant stops using the connection (routing back to the sandbox, connection deleted): the
          // chargeback's connection still serves its dispute, as it serves follow-ups.
          const listed = await ok<Schemas['Connection'][]>(await t.fetch('/connections'));
          await routeCards(t, [{ provider_id: 'SANDBOX_A', connection_id: listed.find((c) => c.provider_id === 'SANDBOX_A')!.connection_id }]);
          expect((await t.fetch(`/connections/${connectionId}`, { method: 'DELETE' })).status).toBe(204);

          // The merchant disputes with evidence; the outbox forwards it to the connection holding the chargeback.
          expect(await ok(await postDispute(t, payment.id, chargeback.id, { evidence: [evidence(), evidence({ file_name: 'delivery.pdf', content_category: 'PROOF_OF_DELIVERY' })] }))).toMatchObject({
            status: 'IN_DISPUTE',
            sub_status: 'PENDING_REVIEW',
          });
          const forwarded = async () => {
            const rows = await t.db.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM dispute_evidence e JOIN disputes d ON d.id = e.dispute_id WHERE d.payment_id = $1 AND e.forwarded_at IS NOT NULL',
              [payment.id],
            );
            return rows[0]!.n;
          };
          for (let i = 0; i < 100 && (await forwarded()) < 2; i++) {
            await t.running.deps.services.payments.outbox.runOnce();
            if ((await forwarded()) < 2) await new Promise((r) => setTimeout(r, 20));
          }
          expect(await forwarded()).toBe(2);
          expect(connector.evidenceAt(doubles, caseId)).toEqual({ documents: 2, submitted: true });

          const decided = connector.decided(doubles, credentials, payment, caseId);
          await delivered(decided);
          const closed = await getPayment(t, payment.id);
          expect(closed).toMatchObject(connector.outcome === 'WON' ? { status: 'SUCCEEDED', sub_status: 'APPROVED' } : { status: 'CHARGEBACK', sub_status: 'LOST' });
          expect(closed.transactions.find((x) => x.id === chargeback.id)).toMatchObject({ status: connector.outcome });
          const final = await footprint(t, payment.id);
          await delivered(decided);
          await delivered(signed);
          expect(await footprint(t, payment.id)).toEqual(final);
          const types = (await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id])).map((r) => r.type);
          expect(types).toEqual(['payment.succeeded', 'payment.chargeback', 'payment.dispute.submitted', connector.outcome === 'WON' ? 'payment.dispute.won' : 'payment.dispute.lost']);
        });
      });
    }
  });
}
