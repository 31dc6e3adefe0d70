/**
 * The per-organization bound on database work (src/db/organization-gate.ts), on a stand-in database whose
 * statements wait until the test lets them go: at most `permits` at once per organization, other
 * organizations and work outside a request never wait, statements inside an admitted transaction pass
 * through, a full queue or an expired wait is ConcurrencyLimitedError (429) — except for work that follows
 * a provider call, which is served first.
 */
import { describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../src/db/database.js';
import { ConcurrencyLimitedError, gateByOrganization } from '../src/db/organization-gate.js';
import { inRequestScope, noteProviderCall } from '../src/platform/request-scope.js';

/** A database whose every statement waits for `releaseAll`; counts what runs at once. */
function heldDatabase() {
  const waiting: (() => void)[] = [];
  const state = { running: 0, peak: 0, order: [] as string[] };
  const query = async <R>(text: string): Promise<R[]> => {
    state.running++;
    state.peak = Math.max(state.peak, state.running);
    state.order.push(text);
    await new Promise<void>((resolve) => waiting.push(resolve));
    state.running--;
    return [];
  };
  const q: Queryable = { query, exec: async () => {}, transaction: (fn) => fn(q) };
  const db: Database = { ...q, kind: 'pglite', ping: async () => true, close: async () => {} };
  return {
    db,
    state,
    releaseAll: () => waiting.splice(0).forEach((go) => go()),
  };
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the per-organization database gate', () => {
  it('holds an organization to its permits; another organization and work outside a request pass', async () => {
    const { db, state, releaseAll } = heldDatabase();
    const gated = gateByOrganization(db, { permits: 2, queueLimit: 10, waitMs: 5_000, finishingWaitMs: 5_000 });
    const x = Array.from({ length: 5 }, (_, i) => inRequestScope('org-x', () => gated.query(`x${i}`)));
    await tick();
    expect(state.running).toBe(2);
    const y = inRequestScope('org-y', () => gated.query('y'));
    const background = gated.query('worker');
    await tick();
    expect(state.running).toBe(4);
    while (state.running > 0 || state.order.length < 7) {
      releaseAll();
      await tick();
    }
    await Promise.all([...x, y, background]);
    expect(state.order.filter((t) => t.startsWith('x'))).toEqual(['x0', 'x1', 'x2', 'x3', 'x4']);
  });

  it('statements inside an admitted transaction pass through (no self-deadlock)', async () => {
    const { db, releaseAll } = heldDatabase();
    const gated = gateByOrganization(db, { permits: 1, queueLimit: 10, waitMs: 200, finishingWaitMs: 200 });
    const done = inRequestScope('org-x', () =>
      gated.transaction(async (tx) => {
        await Promise.all([tx.query('inner'), gated.query('top-level inside the transaction')]);
        return 'ok';
      }),
    );
    for (let i = 0; i < 5; i++) {
      await tick();
      releaseAll();
    }
    await expect(done).resolves.toBe('ok');
  });

  it('a full queue and an expired wait are ConcurrencyLimitedError; work after a provider call goes first and is not refused for a full queue', async () => {
    const { db, state, releaseAll } = heldDatabase();
    const gated = gateByOrganization(db, { permits: 1, queueLimit: 2, waitMs: 10_000, finishingWaitMs: 10_000 });
    const first = inRequestScope('org-x', () => gated.query('running'));
    const queued = [1, 2].map((i) => inRequestScope('org-x', () => gated.query(`queued${i}`)));
    await tick();
    await expect(inRequestScope('org-x', () => gated.query('one too many'))).rejects.toBeInstanceOf(ConcurrencyLimitedError);
    const finishing = inRequestScope('org-x', () => {
      noteProviderCall();
      return gated.query('phase C');
    });
    await tick();
    while (state.order.length < 4 || state.running > 0) {
      releaseAll();
      await tick();
    }
    await Promise.all([first, ...queued, finishing]);
    expect(state.order).toEqual(['running', 'phase C', 'queued1', 'queued2']);

    const slow = gateByOrganization(heldDatabase().db, { permits: 1, queueLimit: 10, waitMs: 20, finishingWaitMs: 20 });
    void inRequestScope('org-x', () => slow.query('holds'));
    await expect(inRequestScope('org-x', () => slow.query('waits too long'))).rejects.toMatchObject({ reason: 'wait expired' });
  });
});
