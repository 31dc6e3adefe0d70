/**
 * Captures, voids and refunds go to the provider that holds the authorization, outside any database
 * transaction (docs/design.md §5 "Phases"): after a failover they name SANDBOX_B and its connection and
 * reach B's ledger only; a provider that does not answer leaves the follow-up PENDING with its amount
 * reserved (502 PROVIDER_UNAVAILABLE), the reconciliation settles it, and a retry with the key learns the
 * settled answer; while the acquirer holds the call, nothing of ours is locked.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, CARDS, createCustomer, createPayment, getPayment, postLifecycle } from './support/payments.js';

type Payment = Schemas['Payment'];
interface LedgerEntry {
  reference: string;
  payment_id: string | null;
  kind: string;
  status: string;
}

async function ok(res: Response, status = 200): Promise<Payment> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as Payment;
  expectSchema('Payment', body);
  return body;
}

async function ledger(url: string): Promise<LedgerEntry[]> {
  const res = await fetch(`${url}/_sandbox/ledger`);
  return ((await res.json()) as { operations: LedgerEntry[] }).operations;
}

async function faults(url: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/_sandbox/faults`, { method: body === null ? 'DELETE' : 'PUT', headers: { 'content-type': 'application/json' }, body: body === null ? undefined : JSON.stringify(body) });
  expect(res.ok).toBe(true);
}

/** The connection a transaction went through, as the database records it. */
async function connectionOf(t: TestServer, transactionId: string): Promise<string | null> {
  const rows = await t.db.query<{ connection_id: string | null }>('SELECT connection_id FROM payment_transactions WHERE id = $1', [transactionId]);
  return rows[0]?.connection_id ?? null;
}

for (const backend of backends()) {
  describe(`follow-ups at the provider holding the authorization, on ${backend}`, () => {
    // The acquirers run here, so the test reads their ledgers and sets their faults by URL.
    let acquirers: SandboxAcquirers;
    // Reconciliation runs when the test says (runOnce), not on its own timer between two assertions.
    const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000' };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer(backend, { env });
    afterEach(async () => {
      for (const url of [acquirers.a.url, acquirers.b.url]) await faults(url, null);
    });
    afterAll(() => acquirers.close());

    it('after a failover (…0077: A errs, B authorizes) the capture and the refund name SANDBOX_B and its connection; B has them, A nothing', async () => {
      const payment = await authorizedPayment(t, { card: CARDS.providerError });
      expect(payment).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      const read = await getPayment(t, payment.id);
      const auth = read.transactions.find((x) => x.type === 'AUTHORIZE' && x.status === 'SUCCEEDED')!;
      expect(auth.provider_id).toBe('SANDBOX_B');
      const bConnection = await connectionOf(t, auth.id);
      expect(bConnection).not.toBeNull();

      const captured = await ok(await postLifecycle(t, payment.id, 'capture', { amount: { currency: 'BRL', value: 100 } }, { transactionId: auth.id }));
      const capture = captured.transactions.at(-1)!;
      expect(capture).toMatchObject({ type: 'CAPTURE', status: 'SUCCEEDED', provider_id: 'SANDBOX_B', connection_data: auth.connection_data });
      const refunded = await ok(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 40 } }, { transactionId: capture.id }));
      const refund = refunded.transactions.at(-1)!;
      expect(refund).toMatchObject({ type: 'REFUND', status: 'SUCCEEDED', provider_id: 'SANDBOX_B', connection_data: auth.connection_data });
      expect(refunded).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { captured: 100, refunded: 40 } });
      expect(await connectionOf(t, capture.id)).toBe(bConnection);
      expect(await connectionOf(t, refund.id)).toBe(bConnection);

      // Each provider call's reference is the transaction's id: B's ledger has both, A's neither.
      const atB = await ledger(acquirers.b.url);
      expect(atB.find((e) => e.reference === capture.id)).toMatchObject({ kind: 'CAPTURE', status: 'APPROVED' });
      expect(atB.find((e) => e.reference === refund.id)).toMatchObject({ kind: 'REFUND', status: 'APPROVED' });
      const atA = await ledger(acquirers.a.url);
      expect(atA.filter((e) => e.reference === capture.id || e.reference === refund.id)).toEqual([]);
      expect(atA.filter((e) => ['CAPTURE', 'VOID', 'REFUND'].includes(e.kind) && e.payment_id === payment.id)).toEqual([]);
    });

    it('a void after a failover goes to SANDBOX_B too', async () => {
      const payment = await authorizedPayment(t, { card: CARDS.providerError });
      const canceled = await ok(await postLifecycle(t, payment.id, 'cancel-or-refund', {}), 201);
      const cancel = canceled.transactions.at(-1)!;
      expect(cancel).toMatchObject({ type: 'CANCEL', status: 'SUCCEEDED', provider_id: 'SANDBOX_B' });
      expect((await ledger(acquirers.b.url)).find((e) => e.reference === cancel.id)).toMatchObject({ kind: 'VOID', status: 'APPROVED' });
      expect((await ledger(acquirers.a.url)).some((e) => e.reference === cancel.id)).toBe(false);
    });

    it('an authorization recorded before orchestration (provider SANDBOX, no connection) is followed up at SANDBOX_A: a clear 422, never a 500', async () => {
      const payment = await authorizedPayment(t);
      const auth = payment.transactions;
      // As the in-process sandbox of 2.0 wrote it: provider SANDBOX, no connection; SANDBOX_A's ledger never saw it.
      await t.db.query("UPDATE payment_transactions SET provider_id = 'SANDBOX', connection_id = NULL, provider_transaction_id = 'sbx_txn_legacy00000000' WHERE id = $1", [auth.id]);
      const refused = await expectProblem(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth.id }), 422, 'PROVIDER_DECLINED');
      expect(String(refused.detail)).toContain('TRANSACTION_NOT_FOUND');
      expect((await getPayment(t, payment.id)).sub_status).toBe('AUTHORIZED');
    });

    /** A payment charged at SANDBOX_B after A's error (…0077), and its PURCHASE there. */
    async function paidAtB(value = 100): Promise<{ payment: Payment; purchase: Schemas['Transaction'] }> {
      const created = await createPayment(t, { card: CARDS.providerError, amount: { currency: 'BRL', value } });
      const payment = await getPayment(t, created.id, '?transactions_history=true');
      const purchase = payment.transactions.find((x) => x.type === 'PURCHASE' && x.status === 'SUCCEEDED')!;
      expect(purchase.provider_id).toBe('SANDBOX_B');
      await shortenTimeout(t, (await connectionOf(t, purchase.id))!);
      return { payment, purchase };
    }

    /** The payment as before (status, amounts, history, updated_at) with `extra` transactions after the old ones. */
    function withoutTransactions(p: Payment) {
      const { transactions: _, ...rest } = p;
      return rest;
    }

    it('a refund the provider never answers: 502 PROVIDER_UNAVAILABLE, the payment unchanged and the amount reserved; reconciliation applies it; the key then answers the settled refund', async () => {
      const { payment, purchase } = await paidAtB();
      await faults(acquirers.b.url, { failRate: 1, mode: 'silent' }); // B refunds, and never answers
      const key = randomUUID();
      const res = await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id, key });
      const problem = await expectProblem(res, 502, 'PROVIDER_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(problem.detail).toContain('X-Idempotency-Key');

      const during = await getPayment(t, payment.id, '?transactions_history=true');
      expect(withoutTransactions(during)).toEqual(withoutTransactions(payment));
      const pending = during.transactions.at(-1)!;
      expect(pending).toMatchObject({ type: 'REFUND', status: 'PENDING', amount: 100, provider_id: 'SANDBOX_B' });
      // The amount in flight is reserved: nothing is left to refund until it is settled.
      await expectProblem(await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 1 } }, { transactionId: purchase.id }), 409, 'INVALID_STATUS');
      // The same key learns nothing new until then.
      await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id, key }), 409, 'REQUEST_IN_PROCESS');
      expect((await ledger(acquirers.b.url)).find((e) => e.reference === pending.id)).toMatchObject({ kind: 'REFUND', status: 'APPROVED' });

      await faults(acquirers.b.url, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const settled = await getPayment(t, payment.id, '?transactions_history=true');
      expect(settled).toMatchObject({ status: 'REFUNDED', sub_status: 'REFUNDED', amount: { captured: 100, refunded: 100 } });
      expect(settled.transactions.at(-1)).toMatchObject({ id: pending.id, type: 'REFUND', status: 'SUCCEEDED' });
      expect(settled.transactions_history!.at(-1)).toMatchObject({ status: 'REFUNDED', transaction_id: pending.id });

      const again = await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id, key });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await ok(again)).toMatchObject({ id: payment.id, status: 'REFUNDED', amount: { refunded: 100 } });
      const events = await t.db.query<{ type: string }>('SELECT type FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [payment.id]);
      expect(events.map((e) => e.type).filter((e) => e === 'payment.refunded')).toHaveLength(1);
    });

    it('a refund that never reached the provider: reconciliation finds nothing, releases the reservation; the key answers 422, a new refund takes the whole amount', async () => {
      const { payment, purchase } = await paidAtB();
      await faults(acquirers.b.url, { failRate: 1, mode: 'refuse' }); // the connection is cut before B processes anything
      const key = randomUUID();
      await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id, key }), 502, 'PROVIDER_UNAVAILABLE');
      const pending = (await getPayment(t, payment.id)).transactions.at(-1)!;
      expect(pending).toMatchObject({ type: 'REFUND', status: 'PENDING' });

      await faults(acquirers.b.url, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const after = await getPayment(t, payment.id, '?transactions_history=true');
      expect(withoutTransactions(after)).toEqual(withoutTransactions(payment));
      expect(after.transactions.at(-1)).toMatchObject({ id: pending.id, status: 'ERROR', response_code: 'NOT_PROCESSED' });
      const answer = await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id, key }), 422, 'PROVIDER_DECLINED');
      expect(answer.detail).toContain('did not process');
      // The provider refuses the late reference for good (tombstone), and the amount is free again.
      expect((await ledger(acquirers.b.url)).some((e) => e.reference === pending.id && e.status === 'APPROVED')).toBe(false);
      expect(await ok(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id }))).toMatchObject({ status: 'REFUNDED', amount: { refunded: 100 } });
    });

    /** The payment.operation.failed events of a payment: the transaction each names. */
    async function operationFailed(paymentId: string): Promise<Schemas['Transaction'][]> {
      const res = await t.fetch('/events?type=payment.operation.failed');
      expect(res.status).toBe(200);
      const data = ((await res.json()) as Schemas['EventList']).events.map((e) => e.data as unknown as { payment: Payment; transaction: Schemas['Transaction'] });
      return data.filter((d) => d.payment.id === paymentId).map((d) => d.transaction);
    }

    it('a follow-up reconciliation settles as failed after a 502 is announced once: payment.operation.failed for NOT_PROCESSED (refund never reached B) and for a refusal found by the lookup (capture declined at A)', async () => {
      // Never reached the provider: the merchant got a 502; the reconciliation's "not processed" is an event.
      const { payment, purchase } = await paidAtB();
      await faults(acquirers.b.url, { failRate: 1, mode: 'refuse' });
      await expectProblem(await postLifecycle(t, payment.id, 'refund', {}, { transactionId: purchase.id }), 502, 'PROVIDER_UNAVAILABLE');
      await faults(acquirers.b.url, null);
      const pending = (await getPayment(t, payment.id)).transactions.at(-1)!;
      expect(await operationFailed(payment.id)).toEqual([]);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const announced = await operationFailed(payment.id);
      expect(announced).toHaveLength(1);
      expect(announced[0]).toMatchObject({ id: pending.id, type: 'REFUND', status: 'ERROR', response_code: 'NOT_PROCESSED' });
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', amount: { refunded: 0 } });

      // Processed and refused at A, the answer lost: the lookup finds the refusal; announced once too.
      const auth = await authorizedPayment(t, { card: CARDS.captureFails });
      const authTx = (await getPayment(t, auth.id)).transactions.find((x) => x.type === 'AUTHORIZE' && x.status === 'SUCCEEDED')!;
      await shortenTimeout(t, (await connectionOf(t, authTx.id))!);
      await faults(acquirers.a.url, { failRate: 1, mode: 'silent' });
      await expectProblem(await postLifecycle(t, auth.id, 'capture', {}, { transactionId: authTx.id }), 502, 'PROVIDER_UNAVAILABLE');
      await faults(acquirers.a.url, null);
      const capture = (await getPayment(t, auth.id)).transactions.at(-1)!;
      expect(capture).toMatchObject({ type: 'CAPTURE', status: 'PENDING' });
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const refused = await operationFailed(auth.id);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ id: capture.id, type: 'CAPTURE', status: 'DECLINED', response_code: 'CAPTURE_DECLINED' });
      expect(await getPayment(t, auth.id)).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
    });

    it('a capture in flight blocks a second capture and a void (409) until reconciliation settles it: CAPTURED', async () => {
      const payment = await authorizedPayment(t, { card: CARDS.providerError });
      const auth = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'AUTHORIZE' && x.status === 'SUCCEEDED')!;
      await shortenTimeout(t, (await connectionOf(t, auth.id))!);
      await faults(acquirers.b.url, { failRate: 1, mode: 'silent' });
      await expectProblem(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth.id }), 502, 'PROVIDER_UNAVAILABLE');
      await faults(acquirers.b.url, null);
      const busy = await expectProblem(await postLifecycle(t, payment.id, 'capture', {}, { transactionId: auth.id }), 409, 'INVALID_STATUS');
      expect(busy.detail).toContain('in flight');
      await expectProblem(await postLifecycle(t, payment.id, 'cancel', {}, { transactionId: auth.id }), 409, 'INVALID_STATUS');
      await expectProblem(await postLifecycle(t, payment.id, 'cancel-or-refund', {}), 409, 'INVALID_STATUS');
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED', amount: { captured: 0 } });

      await t.running.deps.services.orchestration.reconciliation.runOnce();
      const captured = await getPayment(t, payment.id);
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'CAPTURED', amount: { captured: 150.5 } });
      expect(captured.transactions.at(-1)).toMatchObject({ type: 'CAPTURE', status: 'SUCCEEDED', provider_id: 'SANDBOX_B' });
    });

    it('concurrent refunds while the provider holds every call: the reservations never add up to more than was captured', async () => {
      const { payment, purchase } = await paidAtB();
      await faults(acquirers.b.url, { failRate: 1, mode: 'silent' });
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 30 } }, { transactionId: purchase.id })),
      );
      const codes = await Promise.all(answers.map(async (r) => `${r.status} ${((await r.json()) as { code?: string }).code ?? ''}`));
      // Three refunds of 30 are in flight (reserved); 10 is left, so every other one is over it.
      expect(codes.sort()).toEqual([...Array(7).fill('422 INVALID_AMOUNT'), ...Array(3).fill('502 PROVIDER_UNAVAILABLE')].sort());
      const pending = (await getPayment(t, payment.id)).transactions.filter((x) => x.type === 'REFUND');
      expect(pending.map((x) => x.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);

      await faults(acquirers.b.url, null);
      await t.running.deps.services.orchestration.reconciliation.runOnce();
      expect(await getPayment(t, payment.id)).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { captured: 100, refunded: 90 } });
      const atB = (await ledger(acquirers.b.url)).filter((e) => e.payment_id === payment.id && e.kind === 'REFUND' && e.status === 'APPROVED');
      expect(atB.map((e) => e.reference).sort()).toEqual(pending.map((x) => x.id).sort());
    });

    it('no transaction is open while the acquirer holds the call: the payment row can be locked (FOR UPDATE NOWAIT) and the reservation is committed', async () => {
      const { payment, purchase } = await paidAtB();
      await faults(acquirers.b.url, { failRate: 1, mode: 'silent' });
      let answered = false;
      const reply = postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: purchase.id }).then((r) => {
        answered = true;
        return r;
      });
      // B has the refund (silent: processed, held unanswered until our timeout).
      let held: LedgerEntry | undefined;
      while (!held) {
        held = (await ledger(acquirers.b.url)).find((e) => e.payment_id === payment.id && e.kind === 'REFUND');
        if (!held) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const seen = await t.db.transaction(async (tx) => {
        await tx.query('SELECT id FROM payments WHERE id = $1 FOR UPDATE NOWAIT', [payment.id]);
        return tx.query<{ status: string }>('SELECT status FROM payment_transactions WHERE id = $1', [held!.reference]);
      });
      expect(answered).toBe(false);
      expect(seen).toEqual([{ status: 'PENDING' }]);
      await expectProblem(await reply, 502, 'PROVIDER_UNAVAILABLE');
    });

    it("enrollment: a verify the provider does not answer is 502 PROVIDER_UNAVAILABLE, nothing enrolled, and the same key runs again once it answers", async () => {
      const customerId = await createCustomer(t);
      const key = randomUUID();
      const enroll = () =>
        t.fetch(`/customers/${customerId}/payment-methods`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-idempotency-key': key },
          body: JSON.stringify({
            account_id: t.sandbox.account_id,
            country: 'BR',
            type: 'CARD',
            verify: { vault_on_success: true },
            card_data: { number: CARDS.approved, holder_name: 'JOAO SILVA', expiration_month: 12, expiration_year: (new Date().getUTCFullYear() + 3) % 100, security_code: '123' },
          }),
        });
      await faults(acquirers.a.url, { failRate: 1, mode: 'refuse' });
      await expectProblem(await enroll(), 502, 'PROVIDER_UNAVAILABLE');
      expect(await t.db.query('SELECT 1 FROM payment_methods WHERE customer_id = $1', [customerId])).toEqual([]);
      await faults(acquirers.a.url, null);
      const res = await enroll();
      const text = await res.text();
      expect(res.status, text).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(JSON.parse(text)).toMatchObject({ status: 'ENROLLED' });
    });
  });
}

/** A short timeout on the connection (PATCH /connections/{id}): a silent acquirer holds its answer until we give up. */
async function shortenTimeout(t: TestServer, connectionId: string): Promise<void> {
  const res = await t.fetch(`/connections/${connectionId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ timeout_ms: 1000 }) });
  expect(res.status, await res.text()).toBe(200);
}
