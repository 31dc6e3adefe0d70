/**
 * One tenant cannot stall everyone's reconciliation (issue 21, finding 6). Tenant X let 100 ms calls time
 * out at SANDBOX_A (a backlog of attempts whose outcome is unknown), then set its connection's timeout_ms to
 * 60 000 while A holds every lookup of X's connection unanswered. Tenant Y's identical unknown attempt (a
 * late approval at A while B approved: its customer holds two approvals until A's is voided) must be
 * settled as soon as if X were not there: claims are fair across organizations (a cap per organization,
 * round robin), lookups run concurrently, and each waits the service's PROVIDER_LOOKUP_TIMEOUT_MS, never
 * the connection's timeout_ms. A lookup that fails backs off, per transaction, across instances.
 *
 * The acquirers run in this process; A's fault surface holds the lookups of X's connection only (`caller`).
 * The worker's own timer stays out of the way: the test drives the passes, as a worker's timer would.
 * Its assertion compares two timings, so it runs alone (vitest.config.ts), like webhooks-fairness.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '@payorch/types';
import { ReconciliationWorker } from '../src/orchestration/reconciliation.js';
import { startSandboxAcquirers, type SandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { setFaults, until } from './support/acquirers.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { CARDS, createCustomer, paymentBody } from './support/payments.js';

type Created = Schemas['CreatedPayment'];
type Connection = Schemas['Connection'];

/** The service's lookup timeout in this test (the default is 5 s). */
const LOOKUP_TIMEOUT_MS = 3_000;
/** The worker's default cap of one organization's transactions claimed at once (reconciliation.ts). */
const PER_ORGANIZATION = 4;
const LATE = '4507990000000085';
/** Y's connection timeout: the part of Y's wait that X cannot change, so a busy machine's noise does not decide the comparison. */
const Y_TIMEOUT_MS = 1_000;
const COOL_DOWN_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const backend of backends()) {
  describe(`reconciliation fairness on ${backend}`, () => {
    let acquirers: SandboxAcquirers;
    const env: Record<string, string> = {
      RECONCILIATION_INTERVAL_MS: '3600000',
      PROVIDER_LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
      // X's silent connection opens its circuit at each timeout: a short cool-down lets each of its payments probe A again.
      CIRCUIT_COOL_DOWN_MS: String(COOL_DOWN_MS),
    };
    beforeAll(async () => {
      acquirers = await startSandboxAcquirers();
      Object.assign(env, { SANDBOX_A_URL: acquirers.a.url, SANDBOX_B_URL: acquirers.b.url });
    });
    const t = useServer(backend, { env });
    afterEach(async () => {
      expect((await setFaults(acquirers.a.url, null)).ok).toBe(true);
    });
    afterAll(() => acquirers?.close());

    const worker = () => t.running.deps.services.orchestration.reconciliation;

    /** An organization of its own: connections to A and B (the default CARD routing A then B) and a customer. */
    async function merchant() {
      const creds = await t.createOrganization({ pciCertified: true });
      const customerId = await createCustomer(t, t.clientFor(creds));
      const headers = { 'public-api-key': creds.public_api_key, 'private-secret-key': creds.private_secret_key };
      const connections = (await (await t.fetch('/connections', { headers })).json()) as Connection[];
      const a = connections.find((c) => c.provider_id === 'SANDBOX_A')!;
      return { creds, customerId, headers, a };
    }
    type Merchant = Awaited<ReturnType<typeof merchant>>;

    async function pay(m: Merchant, card: string): Promise<Created> {
      const res = await t.fetch('/payments', {
        method: 'POST',
        headers: { ...m.headers, 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
        body: JSON.stringify(paymentBody({ ...t, sandbox: m.creds as Credentials }, m.customerId, { card })),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      return JSON.parse(text) as Created;
    }
    async function setTimeoutOf(m: Merchant, timeoutMs: number): Promise<void> {
      const res = await t.fetch(`/connections/${m.a.connection_id}`, {
        method: 'PATCH',
        headers: { ...m.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ timeout_ms: timeoutMs }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    /** The API key A sees from the merchant's connection (what A's faults are scoped to); never logged or stored in clear. */
    async function apiKeyOf(m: Merchant): Promise<string> {
      const opened = await t.running.deps.services.orchestration.routing.openConnection(t.db, m.creds.organization_id, m.a.connection_id);
      const key = opened!.context.credentials.api_key!;
      t.rememberSecret(key, "a connection's API key");
      return key;
    }
    /** Faults on X's connection only: its calls are processed and never answered, its lookups held. */
    async function hangAtA(m: Merchant): Promise<void> {
      const res = await setFaults(acquirers.a.url, { failRate: 1, mode: 'silent', lookups: true, caller: await apiKeyOf(m) });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    const statusOf = async (transactionId: string) =>
      (await t.db.query<{ status: string; reason: string | null }>('SELECT status, reason FROM payment_transactions WHERE id = $1', [transactionId]))[0]!;
    const pendingAttemptsOf = (m: Merchant) =>
      t.db.query<{ id: string }>(
        `SELECT t.id FROM payment_transactions t JOIN payments p ON p.id = t.payment_id
          WHERE p.organization_id = $1 AND t.status = 'PENDING' AND t.type = 'PURCHASE'`,
        [m.creds.organization_id],
      );
    const claimedOf = async (m: Merchant) =>
      (
        await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM payment_transactions t JOIN payments p ON p.id = t.payment_id
            WHERE p.organization_id = $1 AND t.status = 'PENDING' AND t.claimed_until > clock_timestamp()`,
          [m.creds.organization_id],
        )
      )[0]!.n;

    /**
     * The passes a worker's timer runs, driven from here: one every 50 ms, none waiting for the previous one
     * to end. Paused while Y's payment runs (a pass then could find its route still running and put the
     * attempt off for a second, in either run): the work already claimed goes on meanwhile.
     */
    function drivePasses(): { pause(): void; resume(): void; stop(): void } {
      let timer: NodeJS.Timeout | undefined;
      const pass = () => void worker().runOnce().catch(() => undefined);
      const resume = () => {
        pass();
        timer = setInterval(pass, 50);
      };
      const pause = () => clearInterval(timer);
      resume();
      return { pause, resume, stop: pause };
    }

    /** Tenant Y: a connection to A with a 1 s timeout. */
    async function tenantY(): Promise<Merchant> {
      const y = await merchant();
      await setTimeoutOf(y, Y_TIMEOUT_MS);
      return y;
    }

    /**
     * Y's scenario: a late approval at A (its answer held past Y's timeout) while B approves. Returns how
     * long its customer held two approvals: from the payment request until reconciliation voided A's
     * (waiting at most `limitMs`).
     */
    async function lateApprovalSettledIn(passes: ReturnType<typeof drivePasses>, y: Merchant, limitMs: number): Promise<{ ms: number; attemptId: string }> {
      const from = performance.now();
      passes.pause();
      let p: Created;
      try {
        p = await pay(y, LATE);
      } finally {
        passes.resume();
      }
      expect(p).toMatchObject({ status: 'SUCCEEDED' });
      const attempt = p.transactions_history![0]!;
      expect([attempt.provider_id, attempt.status]).toEqual(['SANDBOX_A', 'PENDING']);
      while ((await statusOf(attempt.id)).status === 'PENDING' && performance.now() - from < limitMs) await sleep(10);
      return { ms: performance.now() - from, attemptId: attempt.id };
    }

    it("Y's late approval is voided as soon as without X's backlog of hanging lookups (within 2× its baseline)", async () => {
      const passes = drivePasses();
      let baseline: number;
      try {
        // Baseline: the same scenario with nobody else's backlog: the median of three runs, after one to warm up.
        await lateApprovalSettledIn(passes, await tenantY(), 30_000);
        const runs: number[] = [];
        for (let i = 0; i < 3; i++) {
          const run = await lateApprovalSettledIn(passes, await tenantY(), 30_000);
          expect(await statusOf(run.attemptId)).toEqual({ status: 'CANCELED', reason: 'LATE_APPROVAL_REVERSED' });
          runs.push(run.ms);
        }
        baseline = [...runs].sort((a, b) => a - b)[1]!;
        console.info(`reconciliation fairness (${backend}): baseline runs ${runs.map(Math.round).join(', ')} ms`);
      } finally {
        passes.stop();
      }

      // Tenant X: 100 ms timeouts at A, whose calls on X's connection are processed and never answered…
      const x = await merchant();
      await setTimeoutOf(x, 100);
      await hangAtA(x);
      for (let i = 0; i < 16; i++) {
        await pay(x, CARDS.approved);
        await sleep(COOL_DOWN_MS + 20);
      }
      const backlog = await pendingAttemptsOf(x);
      expect(backlog.length).toBeGreaterThanOrEqual(3 * PER_ORGANIZATION);
      // …then the longest timeout, with every lookup of its connection held unanswered.
      await setTimeoutOf(x, 60_000);

      const y = await tenantY();
      const attack = drivePasses();
      let maxClaimedByX = 0;
      const sampling = setInterval(() => void claimedOf(x).then((n) => (maxClaimedByX = Math.max(maxClaimedByX, n)), () => undefined), 20);
      try {
        // Y's attempt arrives while X's lookups hang in the slots they were just claimed into (for the lookup timeout).
        await until(async () => (await claimedOf(x)) >= PER_ORGANIZATION, 10_000);
        const run = await lateApprovalSettledIn(attack, y, 30_000);
        const heldByX = await claimedOf(x);
        console.info(`reconciliation fairness (${backend}): Y's late approval voided after ${Math.round(run.ms)} ms with X's backlog of ${backlog.length} (${heldByX} of its lookups hanging), ${Math.round(baseline)} ms without`);
        expect(await statusOf(run.attemptId)).toEqual({ status: 'CANCELED', reason: 'LATE_APPROVAL_REVERSED' });
        expect(run.ms, `Y settled after ${Math.round(run.ms)} ms with X's backlog, ${Math.round(baseline)} ms without`).toBeLessThanOrEqual(2 * baseline);
        expect(heldByX).toBe(PER_ORGANIZATION); // X's lookups were hanging all along
      } finally {
        clearInterval(sampling);
        attack.stop();
      }
      // X held at most its share of the claims, and its attempts are still unknown (their lookups hang).
      expect(maxClaimedByX).toBe(PER_ORGANIZATION);
      expect((await pendingAttemptsOf(x)).length).toBe(backlog.length);

      // Once A answers X's lookups again, X's attempts are settled too (their approvals at A voided: B took each payment).
      expect((await setFaults(acquirers.a.url, null)).ok).toBe(true);
      await until(async () => (await claimedOf(x)) === 0, 10_000); // the lookups still held were cut: their claims end
      await t.db.query(`UPDATE payment_transactions SET reconcile_after = clock_timestamp() WHERE id = ANY($1::text[])`, [backlog.map((b) => b.id)]);
      await worker().drain();
      expect(await pendingAttemptsOf(x)).toEqual([]);
    });

    it("a lookup waits the service's PROVIDER_LOOKUP_TIMEOUT_MS even when the connection says 60 000 ms", async () => {
      const x = await merchant();
      await setTimeoutOf(x, 100);
      await hangAtA(x);
      const p = await pay(x, CARDS.approved);
      const attemptId = p.transactions_history![0]!.id;
      expect((await statusOf(attemptId)).status).toBe('PENDING');
      await setTimeoutOf(x, 60_000);

      // What the adapter is handed: X's credentials with the service's timeout.
      const provider = t.running.deps.services.orchestration.providers.get('SANDBOX_A')!;
      const seen: (number | undefined)[] = [];
      const lookup = provider.lookup.bind(provider);
      Object.assign(provider, {
        lookup: (input: Parameters<typeof lookup>[0]) => {
          if (input.reference === attemptId) seen.push(input.connection?.timeoutMs);
          return lookup(input);
        },
      });
      try {
        const started = performance.now();
        const pass = await Promise.race([worker().runOnce(), sleep(15_000).then(() => 'still waiting after 15 s')]);
        const ms = performance.now() - started;
        expect(pass).not.toBe('still waiting after 15 s');
        expect(seen).toEqual([LOOKUP_TIMEOUT_MS]);
        expect(ms).toBeGreaterThanOrEqual(LOOKUP_TIMEOUT_MS - 50);
        expect(ms).toBeLessThan(15_000);
      } finally {
        // Put the provider's own lookup back (the registry hands out a wrapper whose lookup is its own
        // property: deleting it would leave the provider with none for the rest of the file).
        Object.assign(provider, { lookup });
      }
      // Not answered: asked again later, counted.
      const [row] = await t.db.query<{ status: string; reconcile_attempts: number; due_in_ms: number }>(
        `SELECT status, reconcile_attempts, extract(epoch FROM reconcile_after - clock_timestamp()) * 1000 AS due_in_ms FROM payment_transactions WHERE id = $1`,
        [attemptId],
      );
      expect(row).toMatchObject({ status: 'PENDING', reconcile_attempts: 1 });
      expect(Number(row!.due_in_ms)).toBeGreaterThan(0);
    });

    it('a failing lookup backs off, doubling per transaction, counted when claimed: a claim whose worker never reports counts too', async () => {
      const x = await merchant();
      await setTimeoutOf(x, 100);
      await hangAtA(x);
      const p = await pay(x, CARDS.approved);
      const attemptId = p.transactions_history![0]!.id;
      await setTimeoutOf(x, 60_000);
      const state = async () =>
        (
          await t.db.query<{ attempts: number; due_in_ms: number }>(
            `SELECT reconcile_attempts AS attempts, extract(epoch FROM reconcile_after - clock_timestamp()) * 1000 AS due_in_ms FROM payment_transactions WHERE id = $1`,
            [attemptId],
          )
        ).map((r) => ({ attempts: r.attempts, dueInMs: Number(r.due_in_ms) }))[0]!;
      const dueNow = () => t.db.query('UPDATE payment_transactions SET reconcile_after = clock_timestamp() WHERE id = $1', [attemptId]);

      // Another instance claims it with a short lease and never reports (its lookup hangs: it died, in effect).
      const o = t.running.deps.services.orchestration;
      const other = new ReconciliationWorker({ orchestration: o, log: t.running.deps.log, intervalMs: 3_600_000, lookupTimeoutMs: 60_000, leaseMs: 200 });
      // This instance, as the service's worker but with a short lookup timeout: each pass below waits out
      // the hanging lookup (the backoff is what is checked, not the timeout: the test above checks that).
      const self = new ReconciliationWorker({ orchestration: o, log: t.running.deps.log, intervalMs: 3_600_000, lookupTimeoutMs: 300 });
      await dueNow();
      const abandoned = other.runOnce();
      // Its claim is made (counted at claim), then its lease runs out: wait for the claim itself, not a
      // fixed time (on a busy machine the claim can take longer than the lease).
      await until(async () => (await state()).attempts === 1, 10_000);
      await sleep(400);

      // This instance takes it over once the lease ran out: its lookup is the second, so it waits 2 s.
      await self.runOnce();
      const afterTakeOver = await state();
      expect(afterTakeOver.attempts).toBe(2);
      expect(afterTakeOver.dueInMs).toBeGreaterThan(2_000 - 500);
      expect(afterTakeOver.dueInMs).toBeLessThanOrEqual(2_000);

      // Each further failure doubles it (1 s base, capped at 5 min).
      let previous = afterTakeOver.dueInMs;
      for (const expected of [4_000, 8_000]) {
        await dueNow();
        await self.runOnce();
        const s = await state();
        expect(s.dueInMs).toBeGreaterThan(expected - 500);
        expect(s.dueInMs).toBeLessThanOrEqual(expected);
        expect(s.dueInMs).toBeGreaterThan(previous);
        previous = s.dueInMs;
      }
      expect((await state()).attempts).toBe(4);

      // The other instance's lookup is cut when the faults are cleared; it reports too late to matter.
      expect((await setFaults(acquirers.a.url, null)).ok).toBe(true);
      await abandoned;
      await other.stop();
      await dueNow();
      await worker().drain();
      expect((await statusOf(attemptId)).status).toBe('CANCELED');
    });
  });
}
