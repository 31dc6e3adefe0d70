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
import { authorizedPayment, CARDS, createPayment, getPayment, postLifecycle } from './support/payments.js';

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
    const env: Record<string, string> = {};
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
  });
}
