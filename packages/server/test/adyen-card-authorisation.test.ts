/**
 * Adyen's AUTHORISATION notification decides a card attempt Adyen answered `Pending` (docs/providers/adyen.md),
 * on each backend. Adyen's lookup is an idempotent replay of the same /payments request, which answers the
 * stored first answer (`Pending`) for ever: without the notification the attempt would stay PENDING — the
 * payment too when Adyen is its only step, and a late approval would never be reversed after a failover.
 *   - route [ADYEN] alone: success=true → the payment takes the approval (SUCCEEDED, or AUTHORIZED when not
 *     captured) with its event; success=false → DECLINED with Adyen's reason;
 *   - route [ADYEN, SANDBOX_A]: the sandbox approved; success=true → a late approval: reconciliation voids it at
 *     Adyen without asking (CANCELED / LATE_APPROVAL_REVERSED, Adyen's cancel-or-refund);
 *   - an attempt already settled alike: UNCHANGED; recorded not processed and then notified approved: reversed.
 */
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { reversalReference } from '../src/orchestration/reversals.js';
import { LATE_APPROVAL_REVERSED } from '../src/orchestration/settle.js';
import type { AdyenDouble } from './doubles/adyen/server.js';
import { routeCards, useAdyenServer } from './support/connectors.js';
import { backends } from './support/harness.js';
import { createCustomer, getPayment, paymentBody, postPayment } from './support/payments.js';

type Payment = Schemas['Payment'];

/** No timeout is tested here: long enough that a loaded machine never turns an answer into a timeout. */
const TIMEOUT_MS = 8000;

for (const backend of backends()) {
  describe(`Adyen's AUTHORISATION of a card answered Pending, on ${backend}`, () => {
    const { t, setup } = useAdyenServer(backend, TIMEOUT_MS);
    let double: AdyenDouble;
    let adyenConnection: string;
    let sandboxConnection: string;
    let customerId: string;
    beforeAll(async () => {
      ({ double, adyenConnection, sandboxConnection } = setup);
      customerId = await createCustomer(t);
    });

    const attempts = (p: Payment) => p.transactions.filter((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');
    const onlyAdyen = () => routeCards(t, [{ provider_id: 'ADYEN', connection_id: adyenConnection }]);
    const adyenThenSandbox = () =>
      routeCards(t, [
        { provider_id: 'ADYEN', connection_id: adyenConnection },
        { provider_id: 'SANDBOX_A', connection_id: sandboxConnection },
      ]);

    async function pay(body: ReturnType<typeof paymentBody> = paymentBody(t, customerId)): Promise<Payment> {
      const res = await postPayment(t, body);
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return getPayment(t, (JSON.parse(text) as { id: string }).id);
    }

    /** Adyen's AUTHORISATION for our attempt, signed, posted as Adyen posts it; the notification's recorded state. */
    async function authorisation(attemptId: string, success: boolean): Promise<string> {
      const ledger = double.paymentByReference(attemptId)!;
      const signed = double.signedNotification(
        'AUTHORISATION',
        { pspReference: ledger.pspReference, merchantReference: attemptId, value: ((ledger.request?.amount as { value: number } | undefined)?.value ?? ledger.authorised), currency: ledger.currency },
        { success, ...(success ? { additionalData: { authCode: '123456' } } : { reason: 'Refused' }) },
      );
      expect(signed.schemaErrors).toEqual([]);
      const res = await t.fetch(`/provider-notifications/${adyenConnection}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.text()).toBe('[accepted]');
      const [row] = await t.db.query<{ state: string }>(`SELECT state FROM connection_notifications WHERE connection_id = $1 AND notification_id = $2`, [
        adyenConnection,
        `CARD_AUTHORISATION:${ledger.pspReference}:${success}`,
      ]);
      return row!.state;
    }

    /**
     * Reconciliation takes the payment's PENDING transactions now (as if they were due). Earlier tests' PENDING
     * attempts (Pending for ever at Adyen) are put off an hour: one pass claims at most 4 of the organization,
     * the oldest due first, and they would starve this payment's.
     */
    async function reconcileNow(paymentId: string): Promise<Payment> {
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() + interval '1 hour' WHERE payment_id <> $1 AND status = 'PENDING'`, [paymentId]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      return getPayment(t, paymentId);
    }

    const eventTypes = async (paymentId: string) =>
      (await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [paymentId])).map((r) => r.type);

    /** A payment whose Adyen attempt was answered Pending (Adyen alone on the route): it waits. */
    async function pendingAtAdyen(body?: ReturnType<typeof paymentBody>): Promise<{ payment: Payment; attemptId: string }> {
      double.next({ kind: 'resultCode', resultCode: 'Pending' });
      const payment = await pay(body);
      const [atAdyen] = attempts(payment);
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'PENDING', response_code: 'PROVIDER_BAD_RESPONSE' });
      expect(payment).toMatchObject({ status: 'PENDING', sub_status: 'IN_PROCESS' });
      // Adyen's replay answers Pending again: reconciliation alone never decides it.
      expect(await reconcileNow(payment.id)).toMatchObject({ status: 'PENDING', sub_status: 'IN_PROCESS' });
      return { payment, attemptId: atAdyen!.id };
    }

    it('Adyen alone on the route: AUTHORISATION success=true → the payment takes the approval (SUCCEEDED, payment.succeeded); a re-delivery changes nothing', async () => {
      await onlyAdyen();
      const { payment, attemptId } = await pendingAtAdyen();
      double.settleCard(double.paymentByReference(attemptId)!.pspReference, 'authorised');
      expect(await authorisation(attemptId, true)).toBe('APPLIED');
      const after = await getPayment(t, payment.id);
      expect(after).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(attempts(after)[0]).toMatchObject({ id: attemptId, status: 'SUCCEEDED', provider_data: { transaction_id: double.paymentByReference(attemptId)!.pspReference } });
      expect(await eventTypes(payment.id)).toContain('payment.succeeded');
      // Adyen sends it again: the same notification id, applied once.
      await authorisation(attemptId, true);
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(double.paymentByReference(attemptId)!.reversed).toBe(false);
    });

    it('Adyen alone, capture false: AUTHORISATION success=true → PENDING / AUTHORIZED (payment.authorized)', async () => {
      await onlyAdyen();
      const body = paymentBody(t, customerId);
      (body.payment_method.detail!.card as { capture?: boolean }).capture = false;
      const { payment, attemptId } = await pendingAtAdyen(body);
      double.settleCard(double.paymentByReference(attemptId)!.pspReference, 'authorised');
      expect(await authorisation(attemptId, true)).toBe('APPLIED');
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      expect(await eventTypes(payment.id)).toContain('payment.authorized');
    });

    it('Adyen alone: AUTHORISATION success=false → the attempt DECLINED with Adyen\'s reason, the payment DECLINED (payment.declined)', async () => {
      await onlyAdyen();
      const { payment, attemptId } = await pendingAtAdyen();
      double.settleCard(double.paymentByReference(attemptId)!.pspReference, 'refused');
      expect(await authorisation(attemptId, false)).toBe('APPLIED');
      const after = await getPayment(t, payment.id);
      expect(after).toMatchObject({ status: 'DECLINED', sub_status: 'DECLINED' });
      expect(attempts(after)[0]).toMatchObject({ id: attemptId, status: 'DECLINED', response_message: 'Refused' });
      expect(await eventTypes(payment.id)).toContain('payment.declined');
      // Nothing left for reconciliation.
      const [{ n }] = (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payment_transactions WHERE payment_id = $1 AND status = 'PENDING'`, [payment.id])) as [{ n: number }];
      expect(n).toBe(0);
    });

    it('[ADYEN, SANDBOX_A]: the sandbox approved; AUTHORISATION success=true is a late approval, reversed at Adyen by reconciliation without a lookup', async () => {
      await adyenThenSandbox();
      double.next({ kind: 'resultCode', resultCode: 'Pending' });
      const payment = await pay();
      const [atAdyen, taken] = attempts(payment);
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'PENDING' });
      expect(taken).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED' });
      const ledger = double.settleCard(double.paymentByReference(atAdyen!.id)!.pspReference, 'authorised');
      expect(await authorisation(atAdyen!.id, true)).toBe('APPLIED');
      // No network call in the notification's transaction: the attempt waits for reconciliation, the payment stands.
      const notified = await getPayment(t, payment.id);
      expect(attempts(notified)[0]).toMatchObject({ id: atAdyen!.id, status: 'PENDING', reason: 'NOTIFIED_APPROVAL' });
      expect(notified).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(ledger.reversed).toBe(false);
      const replaysBefore = double.requests.filter((r) => r.idempotencyKey === atAdyen!.id).length;
      const settled = await reconcileNow(payment.id);
      expect(attempts(settled)[0]).toMatchObject({ id: atAdyen!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(settled).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      // Adyen's cancel-or-refund: captured at once, so refunded in full; asked without a replay of the payment.
      expect(ledger).toMatchObject({ reversed: true, refunded: ledger.captured });
      expect(double.requests.filter((r) => r.operation === 'reversals' && r.path.includes(ledger.pspReference))).toHaveLength(1);
      expect(double.requests.filter((r) => r.idempotencyKey === atAdyen!.id)).toHaveLength(replaysBefore);
      // A re-delivery, and the same word again: nothing more.
      expect(await authorisation(atAdyen!.id, true)).toBe('APPLIED'); // (the first record stands: a duplicate)
      await reconcileNow(payment.id);
      expect(double.requests.filter((r) => r.operation === 'reversals' && r.path.includes(ledger.pspReference))).toHaveLength(1);
    });

    it('a notified late approval whose reversal Adyen reports failed is reversed again from its record (a replay would say Pending)', async () => {
      await adyenThenSandbox();
      double.next({ kind: 'resultCode', resultCode: 'Pending' });
      const payment = await pay();
      const [atAdyen] = attempts(payment);
      const ledger = double.settleCard(double.paymentByReference(atAdyen!.id)!.pspReference, 'authorised');
      expect(await authorisation(atAdyen!.id, true)).toBe('APPLIED');
      expect(attempts(await reconcileNow(payment.id))[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      // Adyen could not reverse it after all.
      Object.assign(ledger, { reversed: false, refunded: 0 });
      const signed = double.signedNotification(
        'CANCEL_OR_REFUND',
        { pspReference: `FAILED${ledger.pspReference}`.slice(0, 16), originalReference: ledger.pspReference, merchantReference: reversalReference(atAdyen!.id, 0), value: ledger.authorised, currency: ledger.currency },
        { success: false, reason: 'Refund failed: insufficient balance' },
      );
      expect(signed.schemaErrors).toEqual([]);
      const res = await t.fetch(`/provider-notifications/${adyenConnection}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(attempts(await getPayment(t, payment.id))[0]).toMatchObject({ status: 'PENDING', reason: 'LATE_APPROVAL_REVERSAL_FAILED' });
      const replaysBefore = double.requests.filter((r) => r.idempotencyKey === atAdyen!.id).length;
      const again = await reconcileNow(payment.id);
      expect(attempts(again)[0]).toMatchObject({ id: atAdyen!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(again).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(double.requests.filter((r) => r.operation === 'reversals' && r.path.includes(ledger.pspReference)).map((r) => r.idempotencyKey)).toEqual([
        reversalReference(atAdyen!.id, 0),
        reversalReference(atAdyen!.id, 1),
      ]);
      expect(double.requests.filter((r) => r.idempotencyKey === atAdyen!.id)).toHaveLength(replaysBefore);
    });

    it("Pending is an answer from a working provider: five in a row do not open Adyen's circuit, the next payment still goes to Adyen", async () => {
      await adyenThenSandbox();
      for (let i = 0; i < 5; i += 1) {
        double.next({ kind: 'resultCode', resultCode: 'Pending' });
        expect(attempts(await pay())[0]).toMatchObject({ provider_id: 'ADYEN', status: 'PENDING' });
      }
      expect(attempts(await pay())[0]).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED' });
    });

    it('an attempt Adyen answered on the call: its AUTHORISATION changes nothing (UNCHANGED)', async () => {
      await adyenThenSandbox();
      const payment = await pay();
      const [atAdyen] = attempts(payment);
      expect(atAdyen).toMatchObject({ provider_id: 'ADYEN', status: 'SUCCEEDED' });
      expect(await authorisation(atAdyen!.id, true)).toBe('UNCHANGED');
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
    });

    it('an attempt recorded not processed, then notified approved: a conflict, reversed as a late approval (money first)', async () => {
      await adyenThenSandbox();
      double.next({ kind: 'resultCode', resultCode: 'Pending' });
      const payment = await pay();
      const [atAdyen] = attempts(payment);
      // As if reconciliation had given up on it (not found past the settle window): ERROR / NOT_PROCESSED.
      await t.db.query(`UPDATE payment_transactions SET status = 'ERROR', response_code = 'NOT_PROCESSED', reconcile_after = NULL WHERE id = $1`, [atAdyen!.id]);
      const ledger = double.settleCard(double.paymentByReference(atAdyen!.id)!.pspReference, 'authorised');
      expect(await authorisation(atAdyen!.id, true)).toBe('APPLIED');
      const settled = await reconcileNow(payment.id);
      expect(attempts(settled)[0]).toMatchObject({ id: atAdyen!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(ledger.reversed).toBe(true);
    });
  });
}
