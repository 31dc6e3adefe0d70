/**
 * The reversal of a late approval is followed to its end (orchestration/reversals.ts), on each backend. The
 * card route is [ADYEN, SANDBOX_A]; Adyen's answer times out (the double processed and approved it), the
 * sandbox approves, and reconciliation finds the late approval at Adyen and reverses it (cancel-or-refund,
 * answered "received"). The reversal is no transaction of its own, so Adyen's CANCEL_OR_REFUND notification
 * names our reversal's reference and the payment's pspReference:
 *   - success "false": the attempt no longer reads reversed (LATE_APPROVAL_REVERSAL_FAILED, due again),
 *     payment.operation.failed is recorded and an error logged — not parked unnoticed; reconciliation then
 *     reverses it again under a new reference, and the confirmation of that one changes nothing;
 *   - after MAX_REVERSALS failures the attempt is ERROR / LATE_APPROVAL_REVERSAL_FAILED, out of the queue.
 */
import { randomBytes } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_REVERSALS, reversalReference } from '../src/orchestration/reversals.js';
import { LATE_APPROVAL_REVERSED } from '../src/orchestration/settle.js';
import { signedNotification, type AdyenDouble, type LedgerPayment } from './doubles/adyen/server.js';
import { routeCards, useAdyenServer } from './support/connectors.js';
import { backends } from './support/harness.js';
import { createCustomer, getPayment, paymentBody, postPayment } from './support/payments.js';

type Payment = Schemas['Payment'];

/** A connection timeout short enough for the timeout, long enough for a loaded machine. */
const TIMEOUT_MS = 1500;

for (const backend of backends()) {
  describe(`a late approval's failed reversal, on ${backend}`, () => {
    const { t, setup } = useAdyenServer(backend, TIMEOUT_MS);
    let adyen: AdyenDouble;
    let adyenConnection: string;
    let customerId: string;
    beforeAll(async () => {
      let sandbox: string;
      ({ double: adyen, adyenConnection, sandboxConnection: sandbox } = setup);
      await routeCards(t, [
        { provider_id: 'ADYEN', connection_id: adyenConnection },
        { provider_id: 'SANDBOX_A', connection_id: sandbox },
      ]);
      customerId = await createCustomer(t);
    });

    const attempts = (p: Payment) => p.transactions.filter((x) => x.type === 'PURCHASE' || x.type === 'AUTHORIZE');

    /** Reconciliation takes the payment's PENDING transactions now (as if they were due). */
    async function reconcileNow(paymentId: string): Promise<Payment> {
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [paymentId]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      return getPayment(t, paymentId, '?transactions_history=true');
    }

    /** A purchase approved by the sandbox whose Adyen attempt timed out (approved there) and was reversed by reconciliation. */
    async function reversedLateApproval(): Promise<{ payment: Payment; attemptId: string; ledger: LedgerPayment }> {
      await new Promise((r) => setTimeout(r, 200)); // the circuit opened by an earlier timeout admits a probe again
      adyen.next({ kind: 'timeout' });
      const res = await postPayment(t, paymentBody(t, customerId));
      const text = await res.text();
      expect(res.status, text).toBe(201);
      const payment = await getPayment(t, (JSON.parse(text) as { id: string }).id, '?transactions_history=true');
      const [late, taken] = attempts(payment);
      expect(late).toMatchObject({ provider_id: 'ADYEN', status: 'PENDING' });
      expect(taken).toMatchObject({ provider_id: 'SANDBOX_A', status: 'SUCCEEDED' });
      const ledger = adyen.paymentByReference(late!.id)!;
      const settled = await reconcileNow(payment.id);
      expect(attempts(settled)[0]).toMatchObject({ id: late!.id, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(ledger.reversed).toBe(true);
      return { payment: settled, attemptId: late!.id, ledger };
    }

    /** Adyen's word on a reversal (CANCEL_OR_REFUND), signed, posted as Adyen posts it. */
    async function cancelOrRefund(ledger: LedgerPayment, merchantReference: string, success: boolean) {
      const pspReference = randomBytes(8).toString('hex').toUpperCase();
      const signed = signedNotification(
        'CANCEL_OR_REFUND',
        { pspReference, originalReference: ledger.pspReference, merchantReference, value: ledger.authorised, currency: ledger.currency },
        { success, ...(success ? {} : { reason: 'Refund failed: insufficient balance' }) },
      );
      expect(signed.schemaErrors).toEqual([]);
      const res = await t.fetch(`/provider-notifications/${adyenConnection}`, { method: 'POST', headers: signed.headers, body: signed.body, credentials_: false });
      expect(res.status, await res.clone().text()).toBe(200);
      const [row] = await t.db.query<{ state: string }>(`SELECT state FROM connection_notifications WHERE connection_id = $1 AND notification_id = $2`, [
        adyenConnection,
        `CANCEL_OR_REFUND:${pspReference}:${success}`,
      ]);
      return row!.state;
    }

    const eventTypes = async (paymentId: string) =>
      (await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [paymentId])).map((r) => r.type);

    it('CANCEL_OR_REFUND success=false: the attempt no longer reads reversed, payment.operation.failed and an error log; reconciliation reverses it again under a new reference', async () => {
      const { payment, attemptId, ledger } = await reversedLateApproval();
      const firstReference = reversalReference(attemptId, 0);
      expect(adyen.requests.filter((r) => r.operation === 'reversals').map((r) => r.idempotencyKey)).toContain(firstReference);

      // Adyen could not reverse it after all: the shopper stays charged by Adyen and by the sandbox.
      Object.assign(ledger, { reversed: false, refunded: 0 });
      expect(await cancelOrRefund(ledger, firstReference, false)).toBe('APPLIED');
      const failed = await getPayment(t, payment.id, '?transactions_history=true');
      expect(attempts(failed)[0]).toMatchObject({ id: attemptId, status: 'PENDING', reason: 'LATE_APPROVAL_REVERSAL_FAILED', response_code: 'FAILED_AT_PROVIDER' });
      expect(failed).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED' });
      expect(await eventTypes(payment.id)).toContain('payment.operation.failed');
      expect(t.logs.some((l) => l.includes('"level":50') && l.includes(attemptId) && l.includes('reversal of a late approval failed'))).toBe(true);

      // Reconciliation reverses it again, under a reference of its own (the first one's key would replay the failure).
      const again = await reconcileNow(payment.id);
      const secondReference = reversalReference(attemptId, 1);
      expect(secondReference).not.toBe(firstReference);
      expect(adyen.requests.filter((r) => r.operation === 'reversals' && r.idempotencyKey === secondReference)).toHaveLength(1);
      expect(ledger.reversed).toBe(true);
      expect(attempts(again)[0]).toMatchObject({ id: attemptId, status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      // Its confirmation changes nothing, and is not parked.
      expect(await cancelOrRefund(ledger, secondReference, true)).toBe('UNCHANGED');
      expect(attempts(await getPayment(t, payment.id, '?transactions_history=true'))[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
    });

    it('a reversal that fails while its call is still running is not recorded reversed when the answer comes: it is sent again', async () => {
      const { payment, attemptId, ledger } = await reversedLateApproval();
      Object.assign(ledger, { reversed: false, refunded: 0 });
      expect(await cancelOrRefund(ledger, reversalReference(attemptId, 0), false)).toBe('APPLIED');
      // The second reversal: Adyen processes it and answers "received" only after a while; meanwhile its failure arrives.
      const second = reversalReference(attemptId, 1);
      adyen.next({ kind: 'late', ms: 1500 }, { operation: 'reversals' });
      const running = reconcileNow(payment.id);
      for (let i = 0; i < 100 && !adyen.requests.some((r) => r.operation === 'reversals' && r.idempotencyKey === second); i++) await new Promise((r) => setTimeout(r, 20));
      Object.assign(ledger, { reversed: false, refunded: 0 });
      expect(await cancelOrRefund(ledger, second, false)).toBe('APPLIED');
      const answered = await running;
      expect(attempts(answered)[0]).toMatchObject({ id: attemptId, status: 'PENDING', reason: 'LATE_APPROVAL_REVERSAL_FAILED' });
      // A late word on the first reversal (counted already) changes nothing.
      expect(await cancelOrRefund(ledger, reversalReference(attemptId, 0), false)).toBe('UNCHANGED');
      const third = await reconcileNow(payment.id);
      expect(adyen.requests.filter((r) => r.operation === 'reversals' && r.idempotencyKey === reversalReference(attemptId, 2))).toHaveLength(1);
      expect(attempts(third)[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
      expect(ledger.reversed).toBe(true);
    });

    it(`after ${MAX_REVERSALS} failed reversals the attempt is ERROR / LATE_APPROVAL_REVERSAL_FAILED, out of reconciliation's queue`, async () => {
      const { payment, attemptId, ledger } = await reversedLateApproval();
      for (let n = 0; n < MAX_REVERSALS; n++) {
        if (n > 0) {
          const again = await reconcileNow(payment.id);
          expect(attempts(again)[0]).toMatchObject({ status: 'CANCELED', reason: LATE_APPROVAL_REVERSED });
        }
        Object.assign(ledger, { reversed: false, refunded: 0 });
        expect(await cancelOrRefund(ledger, reversalReference(attemptId, n), false)).toBe('APPLIED');
      }
      const given = await getPayment(t, payment.id, '?transactions_history=true');
      expect(attempts(given)[0]).toMatchObject({ id: attemptId, status: 'ERROR', reason: 'LATE_APPROVAL_REVERSAL_FAILED', response_code: 'FAILED_AT_PROVIDER' });
      expect((await eventTypes(payment.id)).filter((x) => x === 'payment.operation.failed')).toHaveLength(MAX_REVERSALS);
      const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payment_transactions WHERE payment_id = $1 AND status = 'PENDING'`, [payment.id]);
      expect(row!.n).toBe(0);
      expect(adyen.requests.filter((r) => r.operation === 'reversals' && (r.body as { reference?: string }).reference?.length && [0, 1, 2].some((n) => r.idempotencyKey === reversalReference(attemptId, n)))).toHaveLength(MAX_REVERSALS);
    });
  });
}
