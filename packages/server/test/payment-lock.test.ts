/**
 * A payment's work queues per payment in memory (src/payments/payment-lock.ts). Another organization's
 * request naming the payment's id finds no payment; it must not wait in that queue either, or whoever
 * names a merchant's payment id in a stream of captures, cancels or refunds holds up the merchant's own
 * operations on it.
 */
import { describe, expect, it } from 'vitest';
import { inPaymentTransaction } from '../src/payments/payment-lock.js';
import { backends, useServer } from './support/harness.js';
import { authorizedPayment } from './support/payments.js';

for (const backend of backends()) {
  describe(`the payment queue on ${backend}`, () => {
    const t = useServer(backend);

    it("another organization's operations on a payment id do not queue ahead of the owner's", async () => {
      const payment = await authorizedPayment(t);
      const a = t.sandbox.organization_id;
      const b = (await t.createOrganization({ name: 'B' })).organization_id;
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let holding!: () => void;
      const held = new Promise<void>((r) => (holding = r));
      // The owner's operation holds the payment's queue (as one waiting on its row would).
      const first = inPaymentTransaction(t.db, payment.id, a, async (_tx, locked) => {
        order.push(`A1:${locked?.payment ? 'found' : 'none'}`);
        holding();
        await gate;
      });
      await held;
      // B names A's payment ten times, then A asks for a second operation.
      const others = Array.from({ length: 10 }, () => inPaymentTransaction(t.db, payment.id, b, async (_tx, locked) => void order.push(`B:${locked?.payment ? 'found' : 'none'}`)));
      const second = inPaymentTransaction(t.db, payment.id, a, async (_tx, locked) => void order.push(`A2:${locked?.payment ? 'found' : 'none'}`));
      if (backend === 'postgres') {
        // B's answers do not wait for A's operation to end (a generous bound only ends a failing run).
        await Promise.race([Promise.all(others), new Promise((r) => setTimeout(r, 10_000))]);
      }
      order.push('A1 ends');
      release();
      await Promise.all([first, second, ...others]);
      expect(order.filter((o) => o.startsWith('B'))).toEqual(Array(10).fill('B:none'));
      expect(order[0]).toBe('A1:found');
      expect(order).toContain('A2:found');
      if (backend === 'postgres') {
        // Before: B's ten queued behind A1 and ran after it, ahead of A2 (A1 ends, B×10, A2).
        expect(order).toEqual(['A1:found', ...Array(10).fill('B:none'), 'A1 ends', 'A2:found']);
      }
      // (On PGlite every statement shares its one connection, in arrival order, whatever the queue.)
    });
  });
}
