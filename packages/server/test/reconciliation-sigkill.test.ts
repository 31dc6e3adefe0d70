/**
 * Crash recovery of provider calls (issue 16 §1): the service is SIGKILLed while payments' provider calls
 * are in flight, restarted, and its reconciliation settles everything. Then every payment is in a definite
 * state and, across both acquirers' ledgers, each payment has at most one approval that was not voided —
 * exactly one when the payment SUCCEEDED, none otherwise. Twice: with SANDBOX_A holding …0085's answers
 * (late approvals), and with SANDBOX_A gone silent (it processes and never answers).
 *
 * Real processes: the acquirers run standalone (dist/providers/sandbox/acquirers-main.js) so their ledgers
 * outlive the service; the service is dist/main.js on PGlite (its own data directory) and, with
 * DATABASE_URL, on PostgreSQL. Needs the build (npx turbo run build --filter=@payorch/server).
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

const LATE = '4507990000000085';

const built = existsSync(MAIN) && existsSync(ACQUIRERS_MAIN);

for (const backend of backends()) {
  describe.skipIf(!built)(`SIGKILL during provider calls, on ${backend}`, () => {
    let acquirers: ChildProcess;
    let urls: { SANDBOX_A_URL: string; SANDBOX_B_URL: string };
    let pdb: ProcessDatabase | undefined;
    let dataDir: string;
    let creds: Credentials;
    const started: ServerProcess[] = [];

    beforeAll(async () => {
      ({ child: acquirers, urls } = await startAcquirersProcess());
    });
    afterAll(async () => {
      await Promise.all(started.map((p) => p.stop('SIGKILL')));
      acquirers?.kill('SIGTERM');
      await pdb?.drop();
    });

    /** A fresh service database (and data directory) per scenario. */
    async function freshService(): Promise<ServerProcess> {
      dataDir = await mkdtemp(join(tmpdir(), 'payorch-sigkill-'));
      if (backend === 'postgres') {
        await pdb?.drop();
        pdb = await createProcessDatabase();
      } else {
        await seedPgliteDataDir(dataDir);
      }
      const p = await start();
      creds = JSON.parse(await readFile(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as Credentials;
      return p;
    }
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
    const ledger = ledgerOf;
    const faults = setFaults;

    /** A short SANDBOX_A timeout, so attempts abandoned by the crash are overdue soon after the restart. */
    async function shortTimeoutForA(p: ServerProcess): Promise<void> {
      const connections = await json<{ connection_id: string; provider_id: string }[]>(call(p, 'GET', '/connections'), 200);
      const a = connections.find((c) => c.provider_id === 'SANDBOX_A')!;
      await json(call(p, 'PATCH', `/connections/${a.connection_id}`, { timeout_ms: 1500 }), 200);
    }

    /** Fires the payments without waiting for them (the process dies under them); returns their order id. */
    async function fire(p: ServerProcess, cards: string[]): Promise<{ order: string; answers: Promise<unknown>[] }> {
      const customer = await json<{ id: string }>(call(p, 'POST', '/customers', { merchant_customer_id: `cus-${randomUUID()}` }), 201);
      const order = `ORDER-KILL-${randomUUID().slice(0, 8)}`;
      const answers = cards.map((card) =>
        call(
          p,
          'POST',
          '/payments',
          {
            account_id: creds.account_id,
            description: 'crash test',
            country: 'BR',
            merchant_order_id: order,
            // …0085 payments are for 85 BRL, so the acquirer's ledger tells their calls apart.
            amount: { currency: 'BRL', value: card === LATE ? 85 : 25 },
            customer_payer: { id: customer.id },
            payment_method: { type: 'CARD', detail: { card: { card_data: rawCard(card) } } },
          },
          { 'x-idempotency-key': randomUUID() },
        ).catch((err: unknown) => err),
      );
      return { order, answers };
    }

    const paymentsOf = async (p: ServerProcess, order: string) =>
      (await json<{ payments: Schemas['Payment'][] }>(call(p, 'GET', `/payments?merchant_order_id=${order}&limit=100`), 200)).payments;
    const settled = (payments: Schemas['Payment'][]) =>
      payments.every((x) => !['CREATED', 'PENDING'].includes(x.status) || x.sub_status === 'AUTHORIZED') &&
      payments.every((x) => x.transactions.every((t) => t.status !== 'PENDING'));

    /** After the restart: everything settles, and each payment has at most one live approval, matching its status. */
    async function expectSettled(p: ServerProcess, order: string): Promise<Schemas['Payment'][]> {
      await until(async () => settled(await paymentsOf(p, order)), 45_000);
      const payments = await paymentsOf(p, order);
      expect(payments.length).toBeGreaterThan(0);
      expect(payments.filter((x) => !settled([x])).map((x) => [x.status, x.sub_status, x.transactions.map((t) => [t.provider_id, t.status])])).toEqual([]);
      const entries = [...(await ledger(urls.SANDBOX_A_URL)), ...(await ledger(urls.SANDBOX_B_URL))].filter((e) => e.kind === 'PURCHASE');
      const ids = new Set(payments.map((x) => x.id));
      for (const payment of payments) {
        const live = entries.filter((e) => e.payment_id === payment.id && e.status === 'APPROVED');
        expect(live.length, `payment ${payment.id} (${payment.status}) has ${live.length} live approvals`).toBe(payment.status === 'SUCCEEDED' ? 1 : 0);
        if (payment.status === 'SUCCEEDED') {
          // The approval the payment shows is the one the acquirer kept.
          const deciding = payment.transactions.find((t) => t.type === 'PURCHASE' && t.status === 'SUCCEEDED');
          expect(deciding?.id).toBe(live[0]!.reference);
        }
      }
      // No acquirer charged a payment this service does not know (every call came after its payment was recorded).
      const order_entries = entries.filter((e) => e.payment_id !== null && !ids.has(e.payment_id));
      const known = await Promise.all(order_entries.map(async (e) => (await call(p, 'GET', `/payments/${e.payment_id}`)).status));
      expect(known.filter((s) => s !== 200 && s !== 404)).toEqual([]);
      return payments;
    }

    /** What the attempts at SANDBOX_A ended as: [status, reason or response code] → count. */
    const outcomesAtA = (payments: Schemas['Payment'][]) => {
      const counts: Record<string, number> = {};
      for (const t of payments.flatMap((x) => x.transactions).filter((t) => t.provider_id === 'SANDBOX_A')) {
        const k = `${t.status}/${t.reason ?? t.response_code}`;
        counts[k] = (counts[k] ?? 0) + 1;
      }
      return counts;
    };

    it('SANDBOX_A holds answers (…0085) while the service dies: after the restart every payment is settled, at most one charge each', async () => {
      let p = await freshService();
      await shortTimeoutForA(p);
      const before = (await ledger(urls.SANDBOX_A_URL)).length;
      const cards = Array.from({ length: 20 }, (_, i) => (i % 5 === 0 ? CARDS.providerError : i % 2 === 0 ? LATE : CARDS.approved));
      const { order } = await fire(p, cards);
      // Kill once A holds several late approvals (their calls are in flight).
      const held = async () => (await ledger(urls.SANDBOX_A_URL)).slice(before).filter((e) => [85, 8500].includes(Number(e.amount.value))).length;
      await until(async () => (await held()) >= 3, 20_000);
      await p.stop('SIGKILL');
      p = await start();
      const payments = await expectSettled(p, order);
      // A never answers …0085 in time: each such attempt was settled by reconciliation from A's word: its
      // approval taken (the crash came before B was asked), voided (B had approved the payment), or, for a
      // call the crash stopped before it reached A, not processed (the payment ends ERROR, nothing charged).
      const late = payments.filter((x) => x.payment_method.payment_method_detail.card?.card_data.lfd === '0085');
      const endings = late.map((x) => {
        const atA = x.transactions.find((t) => t.provider_id === 'SANDBOX_A');
        // A's circuit opens on its first unanswered call: a payment planned after that (a slow machine
        // fires the 20 over a longer time) skips A altogether and is approved at B.
        if (!atA) return ['SKIPPED', ...x.transactions.map((t) => `${t.provider_id}:${t.status}`), x.status].join(' ');
        return [atA.status, atA.reason ?? atA.response_code, x.status].join(' ');
      });
      for (const ending of endings) {
        expect(['SUCCEEDED SUCCEEDED SUCCEEDED', 'CANCELED LATE_APPROVAL_REVERSED SUCCEEDED', 'ERROR NOT_PROCESSED ERROR', 'SKIPPED SANDBOX_B:SUCCEEDED SUCCEEDED']).toContain(ending);
      }
      // At least the three calls A held at the kill were settled from A's word.
      expect(endings.filter((e) => !e.startsWith('ERROR')).length).toBeGreaterThanOrEqual(3);
      await p.stop('SIGTERM');
    }, 180_000);

    it('SANDBOX_A goes silent (processes, never answers) while the service dies: the same', async () => {
      let p = await freshService();
      await shortTimeoutForA(p);
      const before = (await ledger(urls.SANDBOX_A_URL)).length;
      expect((await faults(urls.SANDBOX_A_URL, { failRate: 1, mode: 'silent' })).ok).toBe(true);
      try {
        const cards = Array.from({ length: 20 }, (_, i) => (i % 4 === 0 ? CARDS.providerError : CARDS.approved));
        const { order } = await fire(p, cards);
        await until(async () => (await ledger(urls.SANDBOX_A_URL)).length - before >= 6, 20_000);
        await p.stop('SIGKILL');
        // The acquirer comes back (voids of its late approvals must reach it).
        await faults(urls.SANDBOX_A_URL, null);
        p = await start();
        const payments = await expectSettled(p, order);
        // Every call A received went unanswered: each was settled by reconciliation, none is left PENDING.
        expect(Object.keys(outcomesAtA(payments)).filter((k) => k.startsWith('PENDING'))).toEqual([]);
        expect(payments.flatMap((x) => x.transactions).filter((t) => t.provider_id === 'SANDBOX_A').length).toBeGreaterThan(0);
      } finally {
        await faults(urls.SANDBOX_A_URL, null);
      }
      await p.stop('SIGTERM');
      await rm(dataDir, { recursive: true, force: true });
    }, 180_000);
  });
}
