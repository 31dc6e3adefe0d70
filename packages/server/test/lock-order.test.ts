/**
 * PostgreSQL only (PGlite has one connection: it cannot interleave two transactions). The row-lock order
 * of src/payments/lock-order.ts, customers → payment_methods → payments, held by the transactions that
 * take these rows together. Phase C of a card payment (its approval, after the provider call) used to lock
 * the payment first and then its customer (vault_on_success enrolls the card for it: FOR SHARE) or its vaulted
 * card (its last use recorded: UPDATE), while a customer's deletion and an unenroll lock the customer and the
 * methods first and then the customer's payments: each waited for the other, PostgreSQL aborted one
 * (40P01) and the DELETE or the unenroll answered 500 (or the payment's phase C died with the charge taken).
 *
 * Deterministic: phase C is held (a spy on the vault's statement it reaches after the payment lock) until
 * the DELETE or the unenroll is seen waiting for a lock phase C holds (pg_blocking_pids), then let go.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { customersRepository } from '../src/customers/repository.js';
import type { Queryable } from '../src/db/database.js';
import { paymentMethodsRepository } from '../src/vault/repository.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { createCustomer, enrollCard, paymentBody, postPayment } from './support/payments.js';

/** A gate on one call: `reached` gives the held transaction's backend pid; `release()` lets the call go on. */
function holdOnce<T extends object, K extends keyof T>(target: T, name: K, when: (args: unknown[]) => boolean) {
  const original = target[name] as unknown as (...args: unknown[]) => Promise<unknown>;
  let reached: (pid: number) => void = () => {};
  let release: () => void = () => {};
  const pid = new Promise<number>((r) => (reached = r));
  const released = new Promise<void>((r) => (release = r));
  let armed = true;
  vi.spyOn(target, name as never).mockImplementation((async (...args: unknown[]) => {
    if (armed && when(args)) {
      armed = false;
      const [row] = await (args[0] as Queryable).query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      reached(row!.pid);
      await released;
    }
    return original.apply(target, args);
  }) as never);
  return { pid, release };
}

/** Resolves once another backend waits for a lock `pid` holds. */
async function someoneWaitsFor(t: TestServer, pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const rows = await t.db.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
    if (rows.length > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`nobody waited for backend ${pid}`);
}

if (backends().includes('postgres')) {
  describe('one row-lock order for customers, payment methods and payments (PostgreSQL)', () => {
    // Reconciliation runs when the test says (runOnce).
    const t = useServer('postgres', { env: { RECONCILIATION_INTERVAL_MS: '3600000' } });
    afterEach(() => vi.restoreAllMocks());

    const methodStatus = async (token: string) =>
      (await t.db.query<{ status: string }>('SELECT status FROM payment_methods WHERE vaulted_token = $1', [token]))[0]?.status;

    it('a payment with vault_on_success approved while its customer is deleted: both succeed, the card vaulted then shredded', async () => {
      const customerId = await createCustomer(t);
      const body = paymentBody(t, customerId);
      body.payment_method = { ...body.payment_method, vault_on_success: true };
      // Phase C's enrollment checks the customer after the payment is locked.
      const gate = holdOnce(customersRepository, 'lockLive', (args) => args[2] === customerId);
      const paying = postPayment(t, body);
      const pid = await gate.pid;
      const deleting = t.fetch(`/customers/${customerId}`, { method: 'DELETE' });
      await someoneWaitsFor(t, pid);
      gate.release();
      const [paid, deleted] = await Promise.all([paying, deleting]);
      const text = await paid.text();
      expect(deleted.status, await deleted.text()).toBe(202);
      expect(paid.status, text).toBe(201);
      const payment = JSON.parse(text) as { status: string; payment_method: { vaulted_token: string | null } };
      expect(payment.status).toBe('SUCCEEDED');
      // Enrolled with the payment, which committed first; the deletion then shredded it.
      expect(payment.payment_method.vaulted_token).toBeTruthy();
      expect(await methodStatus(payment.payment_method.vaulted_token!)).toBe('UNENROLLED');
    });

    for (const during of ['unenroll', 'delete'] as const) {
      it(`a vaulted-card payment approved while its card is ${during === 'unenroll' ? 'unenrolled' : 'its customer deleted'}: both succeed, the card's copies redacted`, async () => {
        const customerId = await createCustomer(t);
        const token = await enrollCard(t, customerId);
        const body = { ...paymentBody(t, customerId), payment_method: { type: 'CARD' as const, vaulted_token: token } };
        // Phase C records the card's use after the payment is locked.
        const gate = holdOnce(paymentMethodsRepository, 'markUsed', (args) => args[1] === token);
        const paying = postPayment(t, body);
        const pid = await gate.pid;
        const other =
          during === 'unenroll'
            ? t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST' })
            : t.fetch(`/customers/${customerId}`, { method: 'DELETE' });
        await someoneWaitsFor(t, pid);
        gate.release();
        const [paid, done] = await Promise.all([paying, other]);
        const text = await paid.text();
        expect(done.status, await done.text()).toBe(during === 'unenroll' ? 200 : 202);
        expect(paid.status, text).toBe(201);
        const payment = JSON.parse(text) as { id: string; status: string };
        expect(payment.status).toBe('SUCCEEDED');
        expect(await methodStatus(token)).toBe('UNENROLLED');
        // The shred, which ran after the payment committed, redacted the payment's card copy.
        const [row] = await t.db.query<{ payment_method: { payment_method_detail: { card: { card_data: Record<string, unknown> } } } }>(
          'SELECT payment_method FROM payments WHERE id = $1',
          [payment.id],
        );
        expect(row!.payment_method.payment_method_detail.card.card_data).toMatchObject({ holder_name: null, fingerprint: null });
      });
    }

    it("a vaulted-card payment settled by the reconciliation while its card is unenrolled: both succeed", async () => {
      const customerId = await createCustomer(t);
      const token = await enrollCard(t, customerId);
      const body = { ...paymentBody(t, customerId), payment_method: { type: 'CARD' as const, vaulted_token: token } };
      // Phase C fails after the approval (a lost connection): the payment waits for the reconciliation.
      let failing = true;
      const markUsed = paymentMethodsRepository.markUsed;
      const spy = vi.spyOn(paymentMethodsRepository, 'markUsed').mockImplementation(async (...args) => {
        if (failing && args[1] === token) {
          failing = false;
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        }
        return markUsed.apply(paymentMethodsRepository, args);
      });
      const res = await postPayment(t, body);
      expect(res.status, await res.text()).toBe(502);
      spy.mockRestore();
      const [waiting] = await t.db.query<{ id: string; status: string }>(`SELECT id, status FROM payments WHERE customer_id = $1`, [customerId]);
      expect(waiting!.status).not.toBe('SUCCEEDED');
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() - interval '1 second' WHERE payment_id = $1 AND status = 'PENDING'`, [waiting!.id]);

      // The reconciliation takes the approval and records the card's use after the payment is locked.
      const gate = holdOnce(paymentMethodsRepository, 'markUsed', (args) => args[1] === token);
      const reconciling = t.running.deps.services.orchestration.reconciliation.runOnce();
      const pid = await gate.pid;
      const unenrolling = t.fetch(`/customers/${customerId}/payment-methods/${token}/unenroll`, { method: 'POST' });
      await someoneWaitsFor(t, pid);
      gate.release();
      const [, unenrolled] = await Promise.all([reconciling, unenrolling]);
      expect(unenrolled.status, await unenrolled.text()).toBe(200);
      const [settled] = await t.db.query<{ status: string }>('SELECT status FROM payments WHERE id = $1', [waiting!.id]);
      expect(settled!.status).toBe('SUCCEEDED');
      expect(await methodStatus(token)).toBe('UNENROLLED');
    });
  });
}
