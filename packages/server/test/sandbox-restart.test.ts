/**
 * The sandbox acquirers the service runs keep their ledgers in its database (migration 0022): an
 * authorization made before the service stops can be captured and refunded after it starts again on the
 * same database and data directory, a lookup of a reference made before the restart still finds it, and a
 * reference repeated after the restart gets its first answer (the acquirer's idempotency outlives it).
 * The restart is the service's own: close() (its acquirers stop with it), then startServer on the same
 * database, configuration and data directory; the new acquirers listen on new ports. On PostgreSQL, the
 * acquirers as their own process (acquirers-main.js) with DATABASE_URL: killed and started again, they
 * still know what they authorized.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, describe, expect, it } from 'vitest';
import type { PaymentProvider, ProviderCard } from '../src/providers/provider.js';
import { sqlLedgers } from '../src/providers/sandbox/acquirer/sql-ledger.js';
import { startSandboxAcquirers } from '../src/providers/sandbox/acquirers.js';
import { SANDBOX_A_DEFAULT_CREDENTIALS, SandboxAProvider } from '../src/providers/sandbox/sandbox-a-provider.js';
import { SANDBOX_B_DEFAULT_CREDENTIALS, SandboxBProvider } from '../src/providers/sandbox/sandbox-b-provider.js';
import { SandboxShared } from '../src/providers/sandbox/sandbox-provider.js';
import { startServer, type RunningServer } from '../src/server.js';
import { ledgerOf, setFaults, startAcquirersProcess } from './support/acquirers.js';
import { backends, useServer } from './support/harness.js';
import { authorizedPayment, CARDS } from './support/payments.js';
import { createProcessDatabase } from './support/processes.js';
import { findPans, scanForSensitiveData } from './support/sensitive-data-scan.js';

type Payment = Schemas['Payment'];

for (const backend of backends()) {
  describe(`the sandbox acquirers across a restart of the service on ${backend}`, () => {
    const t = useServer(backend, { env: { RECONCILIATION_INTERVAL_MS: '3600000' } });
    /** The service now serving (t.running until the first restart). */
    let current: RunningServer | undefined;
    afterAll(async () => {
      if (current && current !== t.running) await current.close();
    });

    /** Stops the running service and starts it again on the same database, configuration and data directory. */
    async function restart(): Promise<RunningServer> {
      const running = current ?? t.running;
      await running.close();
      current = await startServer({ config: running.deps.config, db: t.db, log: running.deps.log });
      return current;
    }
    const provider = (running: RunningServer, id: 'SANDBOX_A' | 'SANDBOX_B'): PaymentProvider => running.deps.services.providers.get(id)!;
    const call = async (running: RunningServer, path: string, body: unknown): Promise<Payment> => {
      const res = await fetch(`${running.url}/v1${path}`, {
        method: 'POST',
        headers: {
          'public-api-key': t.sandbox.public_api_key,
          'private-secret-key': t.sandbox.private_secret_key,
          'content-type': 'application/json',
          'x-idempotency-key': randomUUID(),
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return JSON.parse(text) as Payment;
    };
    const ledgerRows = (paymentId: string) =>
      t.db.query<{ acquirer: string; reference: string; kind: string; status: string }>(
        'SELECT acquirer, reference, kind, status FROM sandbox_acquirer_transactions WHERE payment_id = $1 ORDER BY seq',
        [paymentId],
      );

    it('an authorization made before the restart is captured and partly refunded after it; its reference is still looked up and replayed', async () => {
      const payment = await authorizedPayment(t);
      expect(payment).toMatchObject({ status: 'PENDING', sub_status: 'AUTHORIZED' });
      const auth = payment.transactions as unknown as Schemas['Transaction'];
      expect(auth).toMatchObject({ type: 'AUTHORIZE', status: 'SUCCEEDED', provider_id: 'SANDBOX_A' });
      const [atAcquirer] = await ledgerRows(payment.id);
      expect(atAcquirer).toMatchObject({ acquirer: 'SANDBOX_A', kind: 'AUTHORIZE', status: 'APPROVED' });
      const before = await provider(t.running, 'SANDBOX_A').lookup({ reference: atAcquirer!.reference });
      expect(before.found).toBe(true);

      const restarted = await restart();

      // The reference made before the restart: found by a lookup, and a repeat of it gets the first answer.
      const after = await provider(restarted, 'SANDBOX_A').lookup({ reference: atAcquirer!.reference });
      expect(after).toEqual(before);
      const replayed = await provider(restarted, 'SANDBOX_A').authorize({
        card: card(CARDS.approved),
        amount: '150.50',
        currency: 'BRL',
        reference: atAcquirer!.reference,
        paymentId: payment.id,
        description: 'a repeat after the restart',
      });
      expect(replayed.outcome).toBe('SUCCEEDED');
      expect(replayed.providerTransactionId).toBe(before.found && before.result.providerTransactionId);
      expect(replayed.authorizationCode).toBe(before.found && before.result.authorizationCode);

      // Capture, then a partial refund, through the restarted service: the acquirer knows the authorization.
      const captured = await call(restarted, `/payments/${payment.id}/transactions/${auth.id}/capture`, {});
      expect(captured).toMatchObject({ status: 'SUCCEEDED', sub_status: 'CAPTURED', amount: { captured: 150.5, refunded: 0 } });
      const capture = (captured.transactions as unknown as Schemas['Transaction'][]).find((x) => x.type === 'CAPTURE');
      expect(capture).toMatchObject({ status: 'SUCCEEDED' });
      const refunded = await call(restarted, `/payments/${payment.id}/transactions/${capture!.id}/refund`, { amount: { currency: 'BRL', value: 50.25 } });
      expect(refunded).toMatchObject({ status: 'SUCCEEDED', sub_status: 'PARTIALLY_REFUNDED', amount: { captured: 150.5, refunded: 50.25 } });
      expect((await ledgerRows(payment.id)).map((r) => [r.acquirer, r.kind, r.status])).toEqual([
        ['SANDBOX_A', 'AUTHORIZE', 'APPROVED'],
        ['SANDBOX_A', 'CAPTURE', 'APPROVED'],
        ['SANDBOX_A', 'REFUND', 'APPROVED'],
      ]);
    });

    it('SANDBOX_B too: authorized before, captured, refunded, looked up and replayed after; an unknown reference stays refused', async () => {
      const before = provider(current ?? t.running, 'SANDBOX_B');
      const charge = { card: card(CARDS.approved), amount: '80.00', currency: 'BRL', reference: randomUUID(), paymentId: randomUUID(), description: 'restart' };
      const auth = await before.authorize(charge);
      expect(auth.outcome).toBe('SUCCEEDED');
      // A lookup of a reference never sent tombstones it: after the restart it is still refused.
      const closed = randomUUID();
      expect(await before.lookup({ reference: closed })).toEqual({ found: false });

      const b = provider(await restart(), 'SANDBOX_B');
      const replayed = await b.authorize(charge);
      expect(replayed).toMatchObject({ outcome: 'SUCCEEDED', providerTransactionId: auth.providerTransactionId, authorizationCode: auth.authorizationCode });
      expect(await b.lookup({ reference: charge.reference })).toMatchObject({ found: true, voided: false, result: { providerTransactionId: auth.providerTransactionId } });
      const follow = (reference: string, amount: string) => ({ providerTransactionId: auth.providerTransactionId, amount, currency: 'BRL', reference });
      const capture = await b.capture(follow(randomUUID(), '80.00'));
      expect(capture.outcome).toBe('SUCCEEDED');
      const refundReference = randomUUID();
      const refund = await b.refund(follow(refundReference, '30.00'));
      expect(refund.outcome).toBe('SUCCEEDED');
      expect((await b.refund(follow(refundReference, '30.00'))).providerTransactionId).toBe(refund.providerTransactionId);
      const late = await b.authorize({ ...charge, reference: closed });
      expect(late).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REFERENCE_CLOSED' });
    });

    it('in the database, calls racing on one reference make one line: charged or closed by a lookup, never both', async () => {
      const acquirers = await startSandboxAcquirers({ ledgers: sqlLedgers(t.db) });
      try {
        const conn = (credentials: Record<string, string>) => ({ connectionId: 'test', credentials, timeoutMs: 10_000 });
        const providers = [
          new SandboxAProvider(new SandboxShared(), { url: acquirers.a.url, defaultConnection: conn(SANDBOX_A_DEFAULT_CREDENTIALS) }),
          new SandboxBProvider(new SandboxShared(), { url: acquirers.b.url, defaultConnection: conn(SANDBOX_B_DEFAULT_CREDENTIALS) }),
        ];
        for (const p of providers) {
          for (let round = 0; round < 4; round++) {
            const charge = { card: card(CARDS.approved), amount: '12.00', currency: 'BRL', reference: randomUUID(), paymentId: randomUUID(), description: 'race' };
            const calls = await Promise.all([
              ...Array.from({ length: 4 }, () => p.authorize(charge).then((r) => ({ charged: r }))),
              ...Array.from({ length: 4 }, () => p.lookup({ reference: charge.reference }).then((l) => ({ looked: l }))),
            ]);
            const charged = calls.flatMap((c) => ('charged' in c ? [c.charged] : []));
            const looked = calls.flatMap((c) => ('looked' in c ? [c.looked] : []));
            if (looked.some((l) => !l.found)) {
              // Closed first: every charge of the reference is refused, none recorded.
              for (const r of charged) expect(r).toMatchObject({ outcome: 'ERROR', responseCode: 'PROVIDER_REFERENCE_CLOSED' });
            } else {
              // Charged first: one approval, the same for every call and every lookup.
              const ids = new Set([...charged.map((r) => r.providerTransactionId), ...looked.map((l) => (l.found ? l.result.providerTransactionId : ''))]);
              expect(ids.size).toBe(1);
              expect(charged.every((r) => r.outcome === 'SUCCEEDED')).toBe(true);
            }
            const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND reference = $2', [p.id, charge.reference]);
            expect(rows[0]!.n).toBe(1);
          }
        }
      } finally {
        await acquirers.close();
      }
    });

    it('in the database, an answer the odd_values fault filled with a card number and a key is stored redacted', async () => {
      const acquirers = await startSandboxAcquirers({ ledgers: sqlLedgers(t.db) });
      try {
        expect((await setFaults(acquirers.a.url, { failRate: 1, mode: 'odd_values', status: 'APPROVED', length: 400, seed: 9 })).status).toBe(200);
        const reference = randomUUID();
        const res = await fetch(`${acquirers.a.url}/v1/charges`, {
          method: 'POST',
          headers: { authorization: `Bearer ${SANDBOX_A_DEFAULT_CREDENTIALS.api_key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ reference, capture: false, amount: { value: '9.00', currency: 'BRL' }, card: { number: CARDS.approved } }),
        });
        const sent = await res.text();
        expect(findPans(sent).length).toBeGreaterThan(0);
        const [row] = await t.db.query<{ status: string; answer: string }>('SELECT status, answer FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND reference = $2', ['SANDBOX_A', reference]);
        expect(row!.status).toBe('APPROVED');
        expect(findPans(row!.answer)).toEqual([]);
        expect(row!.answer).toContain('[REDACTED]');
        // The odd answer's id (an approval keeps its own) is what a follow-up names.
        expect(JSON.parse(row!.answer)).toMatchObject({ id: (JSON.parse(sent) as { id: string }).id });
      } finally {
        await setFaults(acquirers.a.url, null);
        await acquirers.close();
      }
    });
  });
}

if (backends().includes('postgres')) {
  describe('acquirers-main with DATABASE_URL', () => {
    it('the acquirers killed and started again on the same database: the authorization is captured, its ledger line kept, no card number stored', async () => {
      const pdb = await createProcessDatabase();
      const started: { child: { kill(signal: NodeJS.Signals): boolean; once(event: 'exit', fn: () => void): unknown } }[] = [];
      const start = async () => {
        const p = await startAcquirersProcess({ databaseUrl: pdb.url });
        started.push(p);
        const url = p.urls.SANDBOX_A_URL;
        return { url, a: new SandboxAProvider(new SandboxShared(), { url, defaultConnection: { connectionId: 'test', credentials: SANDBOX_A_DEFAULT_CREDENTIALS, timeoutMs: 10_000 } }) };
      };
      const kill = async () => {
        const p = started.at(-1)!;
        await new Promise<void>((resolve) => {
          p.child.once('exit', resolve);
          p.child.kill('SIGKILL');
        });
      };
      try {
        const reference = randomUUID();
        const auth = await (await start()).a.authorize({ card: card(CARDS.approved), amount: '20.00', currency: 'BRL', reference, paymentId: randomUUID(), description: 'restart' });
        expect(auth.outcome).toBe('SUCCEEDED');
        await kill();
        const { a, url } = await start();
        expect(await a.lookup({ reference })).toMatchObject({ found: true, voided: false, result: { providerTransactionId: auth.providerTransactionId } });
        const captureReference = randomUUID();
        expect(await a.capture({ providerTransactionId: auth.providerTransactionId, amount: '20.00', currency: 'BRL', reference: captureReference })).toMatchObject({ outcome: 'SUCCEEDED' });
        expect((await ledgerOf(url)).map((e) => [e.reference, e.kind, e.status])).toEqual([
          [reference, 'AUTHORIZE', 'APPROVED'],
          [captureReference, 'CAPTURE', 'APPROVED'],
        ]);
        expect(await scanForSensitiveData({ db: pdb.db })).toEqual([]);
      } finally {
        for (const p of started) p.child.kill('SIGKILL');
        await pdb.drop();
      }
    });
  });
}

function card(number: string): ProviderCard {
  return { number, holderName: 'ANA LIMA', expirationMonth: 12, expirationYear: 30, securityCode: '123', brand: 'VISA' };
}
