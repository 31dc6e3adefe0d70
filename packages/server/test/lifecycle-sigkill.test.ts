/**
 * Crash recovery of the lifecycle's provider calls (docs/design.md §5 "Phases"): refunds are in flight at a
 * silent SANDBOX_A (it refunds, never answers) when the service is SIGKILLed; after the restart the
 * reconciliation settles every one from A's word, each payment's refunded amount is exactly what A's ledger
 * refunded for it, and a retry with a refund's X-Idempotency-Key answers the settled refund.
 *
 * Real processes, as reconciliation-sigkill.test.ts: the acquirers run standalone so their ledgers outlive
 * the service; the service is dist/main.js on PGlite and, with DATABASE_URL, on PostgreSQL. Needs the build.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { ACQUIRERS_MAIN, jsonOf, ledgerOf, merchantCall, serviceEnv, setFaults, startAcquirersProcess, until } from './support/acquirers.js';
import { backends, type Credentials } from './support/harness.js';
import { CARDS, rawCard } from './support/payments.js';
import { createProcessDatabase, MAIN, seedPgliteDataDir, startServerProcess, type ProcessDatabase, type ServerProcess } from './support/processes.js';

const built = existsSync(MAIN) && existsSync(ACQUIRERS_MAIN);

for (const backend of backends()) {
  describe.skipIf(!built)(`SIGKILL during refunds, on ${backend}`, () => {
    let acquirers: ChildProcess;
    let urls: { SANDBOX_A_URL: string; SANDBOX_B_URL: string };
    let pdb: ProcessDatabase | undefined;
    let dataDir: string;
    let creds: Credentials;
    const started: ServerProcess[] = [];

    beforeAll(async () => {
      ({ child: acquirers, urls } = await startAcquirersProcess());
      dataDir = await mkdtemp(join(tmpdir(), 'payorch-lifecycle-sigkill-'));
      if (backend === 'postgres') pdb = await createProcessDatabase();
      else await seedPgliteDataDir(dataDir);
    });
    afterAll(async () => {
      await Promise.all(started.map((p) => p.stop('SIGKILL')));
      acquirers?.kill('SIGTERM');
      await pdb?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    async function start(): Promise<ServerProcess> {
      const p = await startServerProcess({
        dataDir,
        ...(backend === 'postgres' ? { databaseUrl: pdb!.url } : {}),
        env: serviceEnv(urls),
      });
      started.push(p);
      return p;
    }

    const call = (p: ServerProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      merchantCall(p.baseUrl, creds, method, path, body, headers);
    const json = jsonOf;
    const ledger = () => ledgerOf(urls.SANDBOX_A_URL);
    const faults = (body: unknown | null) => setFaults(urls.SANDBOX_A_URL, body);

    it('refunds in flight when the service dies: after the restart each is settled from the acquirer’s word, and its key answers the settled refund', async () => {
      let p = await start();
      creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
      // A short timeout at A: the refunds the crash abandoned are overdue (timeout + grace) soon after the restart.
      const connections = await json<{ connection_id: string; provider_id: string }[]>(call(p, 'GET', '/connections'), 200);
      const a = connections.find((c) => c.provider_id === 'SANDBOX_A')!;
      await json(call(p, 'PATCH', `/connections/${a.connection_id}`, { timeout_ms: 1500 }), 200);

      const customer = await json<{ id: string }>(call(p, 'POST', '/customers', { merchant_customer_id: `cus-${randomUUID()}` }), 201);
      const order = `ORDER-REFUND-KILL-${randomUUID().slice(0, 8)}`;
      const payments: Schemas['CreatedPayment'][] = [];
      for (let i = 0; i < 8; i++) {
        const body = {
          account_id: creds.account_id,
          description: 'refund crash test',
          country: 'BR',
          merchant_order_id: order,
          amount: { currency: 'BRL', value: 25 },
          customer_payer: { id: customer.id },
          payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(CARDS.approved) } } },
        };
        payments.push(await json<Schemas['CreatedPayment']>(call(p, 'POST', '/payments', body, { 'x-idempotency-key': randomUUID() }), 201));
      }
      expect(payments.map((x) => [x.status, x.transactions.provider_id])).toEqual(payments.map(() => ['SUCCEEDED', 'SANDBOX_A']));

      // A refunds and never answers; the service dies while it waits.
      expect((await faults({ failRate: 1, mode: 'silent' })).ok).toBe(true);
      const keys = new Map(payments.map((x) => [x.id, randomUUID()]));
      const refund = (q: ServerProcess, x: Schemas['CreatedPayment']) =>
        call(q, 'POST', `/payments/${x.id}/transactions/${x.transactions.id}/refund`, { amount: { currency: 'BRL', value: 10 } }, { 'x-idempotency-key': keys.get(x.id)! });
      for (const x of payments) void refund(p, x).catch(() => undefined);
      const ids = new Set(payments.map((x) => x.id));
      const refundsAtA = async () => (await ledger()).filter((e) => e.kind === 'REFUND' && ids.has(e.payment_id ?? ''));
      await until(async () => (await refundsAtA()).length >= 4, 20_000);
      await p.stop('SIGKILL');
      await faults(null);
      p = await start();

      // Settled: no transaction PENDING; each payment refunded exactly what A's ledger refunded for it.
      const read = async () => Promise.all(payments.map(async (x) => json<Schemas['Payment']>(call(p, 'GET', `/payments/${x.id}`), 200)));
      await until(async () => (await read()).every((x) => x.transactions.every((t) => t.status !== 'PENDING')), 45_000);
      const after = await read();
      const atA = await refundsAtA();
      expect(atA.length).toBeGreaterThanOrEqual(4);
      for (const x of after) {
        expect(x.transactions.filter((t) => t.status === 'PENDING')).toEqual([]);
        const refunds = x.transactions.filter((t) => t.type === 'REFUND');
        const approved = atA.filter((e) => e.payment_id === x.id && e.status === 'APPROVED');
        expect(approved.length).toBeLessThanOrEqual(1);
        if (approved.length === 1) {
          expect(x).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { refunded: 10 } });
          expect(refunds.find((t) => t.status === 'SUCCEEDED')?.id).toBe(approved[0]!.reference);
        } else {
          // The crash came before the refund reached A (or before it was reserved): nothing moved.
          expect(x).toMatchObject({ status: 'SUCCEEDED', sub_status: 'APPROVED', amount: { refunded: 0 } });
          expect(refunds.filter((t) => t.status === 'SUCCEEDED')).toEqual([]);
        }
      }

      // The refunds' keys: a settled refund is answered from the database (replayed).
      for (const x of payments) {
        const before = after.find((y) => y.id === x.id)!;
        const res = await refund(p, x);
        const text = await res.text();
        if (before.amount.refunded === 10) {
          expect(res.status, text).toBe(200);
          expect(res.headers.get('idempotent-replayed')).toBe('true');
          expect(JSON.parse(text)).toMatchObject({ id: x.id, amount: { refunded: 10 } });
        } else {
          // Reserved and never processed: 422 (NOT_PROCESSED); claimed but not reserved: 409 within the
          // claim's lease; not claimed at all: it runs now (200).
          expect([200, 409, 422], text).toContain(res.status);
        }
      }
      await p.stop('SIGTERM');
    }, 180_000);
  });
}
