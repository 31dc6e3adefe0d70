/**
 * The fair claim (db/fair-claim.ts) that webhook deliveries and reconciliation share: round robin over
 * organizations counting what each already holds. Before, the rank ignored the leases held: when a slot
 * freed, an organization holding 7 hanging deliveries tied with an idle one's first row and won on its
 * older backlog, so two organizations with hanging receivers kept every freed slot between them and a third
 * organization's payment.succeeded waited behind their whole backlog (~200 s with 160 deliveries each).
 *
 * And with every slot of an instance held by hanging organizations, another found none until an attempt
 * timed out: a reserve of the free slots (a quarter of the instance's) now waits for organizations holding
 * nothing. The rule on a plain table (both backends), then the webhook claim itself.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fairPick } from '../src/db/fair-claim.js';
import { recordEvent } from '../src/webhooks/events.js';
import { webhooksRepository } from '../src/webhooks/repository.js';
import { backends, useServer, type Credentials, type TestServer } from './support/harness.js';
import { createPayment, getPayment } from './support/payments.js';

const json = { 'content-type': 'application/json' };
const auth = (c: Credentials) => ({ 'public-api-key': c.public_api_key, 'private-secret-key': c.private_secret_key });

/** Candidates (group, due order) and leases held per group → the groups of what a claim of `limit` picks, in order. */
async function pick(t: TestServer, candidates: [string, number][], held: Record<string, number>, cap: number, limit: number, reserve: number): Promise<string[]> {
  const values = candidates.map((_, i) => `($${3 * i + 1}::text, $${3 * i + 2}::text, $${3 * i + 3}::int)`).join(', ');
  const heldRows = Object.entries(held);
  const heldValues = heldRows.map((_, i) => `($${3 * candidates.length + 2 * i + 1}::text, $${3 * candidates.length + 2 * i + 2}::int)`).join(', ');
  const params = [...candidates.flatMap(([g, due], i) => [`c${i}`, g, due]), ...heldRows.flat()];
  const rows = await t.db.query<{ grp: string }>(
    `WITH ready AS (SELECT * FROM (VALUES ${values}) v(id, grp, due)),
          held AS (SELECT * FROM (VALUES ${heldValues || "(''::text, 0)"}) h(grp, n)),
          picked AS (${fairPick({ from: 'ready', group: 'grp', order: ['due', 'id'], held: 'held', cap: String(cap), limit: String(limit), reserve: String(reserve) })})
     SELECT r.grp FROM picked p JOIN ready r ON r.id = p.id`,
    params,
  );
  return rows.map((r) => r.grp).sort();
}

for (const backend of backends()) {
  describe(`fair claims on ${backend}`, () => {
    const t = useServer(backend);

    it.each([
      // name, candidates [group, due], held, cap, limit, reserve, picked groups
      ['nothing held: every group’s first row before anyone’s second', [['a', 1], ['a', 2], ['b', 3], ['c', 4]], {}, 8, 3, 0, ['a', 'b', 'c']],
      ['a group holding 7 goes after an idle group, however old its backlog', [['a', 1], ['a', 2], ['b', 3], ['c', 9]], { a: 7, b: 7 }, 8, 1, 0, ['c']],
      ['two loaded groups and an idle one, two slots: the idle one, then the lighter', [['a', 1], ['b', 2], ['c', 9]], { a: 7, b: 3 }, 8, 2, 0, ['b', 'c']],
      ['a group at its cap gets nothing even when slots are free', [['a', 1], ['b', 5]], { a: 8 }, 8, 4, 0, ['b']],
      ['reserve: groups holding some fill the free slots only up to the reserve', [['a', 1], ['a', 2], ['b', 3], ['b', 4]], { a: 1, b: 1 }, 8, 4, 2, ['a', 'b']],
      ['reserve: a second row of an idle group is no first row', [['a', 1], ['a', 2]], {}, 8, 2, 1, ['a']],
      ['reserve: the reserved slots take idle groups’ first rows', [['a', 1], ['b', 2], ['c', 9], ['d', 10]], { a: 7, b: 7 }, 8, 2, 2, ['c', 'd']],
    ] as const)('%s', async (_name, candidates, held, cap, limit, reserve, expected) => {
      expect(await pick(t, candidates as unknown as [string, number][], held, cap, limit, reserve)).toEqual(expected);
    });

    it('webhooks: the free slots go to an organization holding nothing, before the backlog of two holding 7 each, and the reserve stays theirs', async () => {
      await t.running.deps.services.webhooks.worker.stop();
      const orgs = { a: await t.createOrganization(), b: await t.createOrganization(), c: await t.createOrganization() };
      const payment = await getPayment(t, (await createPayment(t)).id);
      for (const [name, org] of Object.entries(orgs)) {
        const res = await t.fetch('/webhook-endpoints', { method: 'POST', headers: { ...json, ...auth(org) }, body: JSON.stringify({ url: `https://hooks-${name}.example.com/h`, events: ['*'] }) });
        expect(res.status).toBe(201);
        // A and B: a backlog of 9 deliveries, recorded before C's one.
        for (let i = 0; i < (name === 'c' ? 1 : 9); i++) {
          await t.db.transaction((tx) => recordEvent(tx, { organizationId: org.organization_id, accountId: org.account_id, type: 'payment.succeeded', data: { payment }, resourceId: `${name}-${i}-${randomUUID()}` }));
        }
      }
      // A and B each hold 7 leases (hanging attempts); the caps would let each take one more.
      for (const org of [orgs.a, orgs.b]) {
        await t.db.query(
          `UPDATE webhook_deliveries SET lease_id = $2, locked_until = clock_timestamp() + interval '1 hour'
            WHERE id IN (SELECT id FROM webhook_deliveries WHERE organization_id = $1 ORDER BY event_seq LIMIT 7)`,
          [org.organization_id, randomUUID()],
        );
      }
      const now = new Date(Date.now() + 1_000).toISOString();
      const claimed = await t.db.transaction((tx) =>
        webhooksRepository.claimDue(tx, now, 3, randomUUID(), new Date(Date.now() + 60_000).toISOString(), { perEndpoint: 8, perOrganization: 8 }, 2),
      );
      expect(claimed.map((c) => c.organization_id)).toEqual([orgs.c.organization_id]);
    });
  });
}
