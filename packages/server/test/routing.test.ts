/**
 * Connections and routing (issue 16 §2, docs/guides/routing.md): what every organization starts with,
 * POST/GET/PATCH /v1/routing and GET/PATCH /v1/connections over real HTTP, the validation table (each
 * bad input names its field and stores nothing), cross-tenant ids answering as unknown, and planRoute
 * table-driven over every condition kind. Schema violations are 400 INVALID_REQUEST, the rules the
 * schema cannot state 422 ROUTING_VALIDATION_FAILED.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { openConnection } from '../src/routing/connections.js';
import type { ProviderDescription } from '../src/providers/catalogue.js';
import type { ConnectionRow } from '../src/routing/repository.js';
import type { RoutingCondition, StoredConditionSet } from '../src/routing/model.js';
import type { PaymentFacts } from '../src/routing/plan.js';
import { deleteConnection } from '../src/routing/connections.js';
import { addDefaultRouting, routingRulesOf, updateRouting } from '../src/routing/service.js';
import { createAccount } from '../src/tenancy/service.js';
import { addMissingOrganizationDefaults } from '../src/routing/services.js';
import { routingWarnings, validateRoute } from '../src/routing/validation.js';
import { tenancyRepository } from '../src/tenancy/repository.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { ADMIN_KEY, backends, useServer, type Credentials, type TestServer } from './support/harness.js';

const json = { 'content-type': 'application/json' };
/** The providers the test's server runs (what routing checks steps against). */
const providersOf = (t: TestServer) => t.running.deps.services.providers;
/** planRoute as a payment asks it (the orchestrator's routing port: connection states through its cache). */
const planOf = (t: TestServer, organizationId: string, f: PaymentFacts) => t.running.deps.services.orchestration.routing.planRoute(t.db, organizationId, f);
/** What each of them serves (routing's capability checks). */
const catalogueOf = (t: TestServer) => t.running.deps.services.providerCatalogue;

type ConnectionView = Schemas['Connection'];
type RoutingView = Schemas['Routing'];

const asOrg = (creds: Pick<Credentials, 'public_api_key' | 'private_secret_key'>) => ({
  'public-api-key': creds.public_api_key,
  'private-secret-key': creds.private_secret_key,
});

async function connections(t: TestServer, creds?: Credentials): Promise<ConnectionView[]> {
  const res = await t.fetch('/connections', creds ? { headers: asOrg(creds) } : {});
  expect(res.status).toBe(200);
  const body = (await res.json()) as ConnectionView[];
  expectSchema('ConnectionList', body);
  return body;
}

async function routings(t: TestServer, accountId: string, creds?: Credentials): Promise<RoutingView[]> {
  const res = await t.fetch(`/routing?account_id=${accountId}`, creds ? { headers: asOrg(creds) } : {});
  expect(res.status).toBe(200);
  const body = (await res.json()) as RoutingView[];
  expectSchema('RoutingList', body);
  return body;
}

const postRouting = (t: TestServer, body: unknown, headers: Record<string, string> = {}) =>
  t.fetch('/routing', { method: 'POST', headers: { ...json, 'x-idempotency-key': randomUUID(), ...headers }, body: JSON.stringify(body) });
const patchRouting = (t: TestServer, id: string, body: unknown, headers: Record<string, string> = {}) =>
  t.fetch(`/routing/${id}`, { method: 'PATCH', headers: { ...json, ...headers }, body: JSON.stringify(body) });

/** An account of the sandbox organization without a routing (accounts made by the API get the default one). */
async function bareAccount(t: TestServer): Promise<string> {
  const id = randomUUID();
  await tenancyRepository.insertAccount(t.db, { id, organizationId: t.sandbox.organization_id, name: 'bare' });
  return id;
}

const facts = (over: Partial<PaymentFacts> = {}): PaymentFacts => ({
  accountId: '',
  paymentMethod: 'CARD',
  country: 'CO',
  currency: 'COP',
  amount: '100.00',
  brand: 'VISA',
  iin: '45079900',
  metadata: [],
  ...over,
});

for (const backend of backends()) {
  describe(`routing on ${backend}`, () => {
    const t = useServer(backend);

    describe('what every organization starts with', () => {
      it('two sandbox connections (10 s timeout, enabled) and a CARD routing SANDBOX_A then SANDBOX_B', async () => {
        const org = await t.createOrganization();
        const list = await connections(t, org);
        expect(list.map((c) => [c.provider_id, c.enabled, c.timeout_ms])).toEqual([
          ['SANDBOX_A', true, 10_000],
          ['SANDBOX_B', true, 10_000],
        ]);
        const all = await routings(t, org.account_id, org);
        const routing = all.find((r) => r.payment_method === 'CARD');
        // One routing per method: the asynchronous ones take the same route.
        expect(all.map((r) => [r.payment_method, r.default_route.steps.map((s) => s.provider_id)])).toHaveLength(10);
        expect(new Set(all.map((r) => JSON.stringify(r.default_route.steps)))).toEqual(new Set([JSON.stringify(routing!.default_route.steps)]));
        expect(routing).toMatchObject({ account_id: org.account_id, payment_method: 'CARD', name: 'Card — SANDBOX_A then SANDBOX_B', condition_sets: [] });
        expect(routing!.id).toMatch(/^r_[0-9a-f-]{36}$/);
        expect(routing!.default_route.steps).toEqual([
          { index: 1, provider_id: 'SANDBOX_A', connection_id: list[0]!.connection_id },
          { index: 2, provider_id: 'SANDBOX_B', connection_id: list[1]!.connection_id },
        ]);
      });

      it('the sandbox organization has them too, and an account added by the admin API gets the routing', async () => {
        expect((await connections(t)).map((c) => c.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
        // CARD and each asynchronous method (PIX, BANK_TRANSFER, OXXO, BOLETO, CASH, PAYPAL, MERCADO_PAGO_WALLET, APPLE_PAY, GOOGLE_PAY).
        expect((await routings(t, t.sandbox.account_id)).map((r) => r.payment_method).sort()).toEqual(['APPLE_PAY', 'BANK_TRANSFER', 'BOLETO', 'CARD', 'CASH', 'GOOGLE_PAY', 'MERCADO_PAGO_WALLET', 'OXXO', 'PAYPAL', 'PIX']);
        const res = await t.fetch(`/admin/organizations/${t.sandbox.organization_id}/accounts`, {
          method: 'POST',
          headers: { ...json, 'admin-api-key': ADMIN_KEY },
          credentials_: false,
          body: JSON.stringify({ name: 'Second store' }),
        });
        expect(res.status).toBe(201);
        const account = (await res.json()) as { account_id: string };
        expect((await routings(t, account.account_id)).filter((r) => r.payment_method === 'CARD').map((r) => r.default_route.steps.map((s) => s.provider_id))).toEqual([['SANDBOX_A', 'SANDBOX_B']]);
      });

      it('an organization from before routing (no connection at all) gets the defaults at the next start, once', async () => {
        const org = await t.createOrganization();
        // As a database migrated past 0016 has it: the organization and its account, no connection, no routing.
        await t.db.query('DELETE FROM routings WHERE organization_id = $1', [org.organization_id]);
        await t.db.query('DELETE FROM provider_connections WHERE organization_id = $1', [org.organization_id]);
        expect(await connections(t, org)).toEqual([]);
        const box = t.running.deps.services.connectionBox;
        expect(await addMissingOrganizationDefaults(t.db, box)).toBe(1);
        expect((await connections(t, org)).map((c) => c.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B']);
        expect((await routings(t, org.account_id, org)).filter((r) => r.payment_method === 'CARD').map((r) => r.default_route.steps.map((s) => s.provider_id))).toEqual([['SANDBOX_A', 'SANDBOX_B']]);
        // Organizations with connections (this one now, every other) are left alone.
        expect(await addMissingOrganizationDefaults(t.db, box)).toBe(0);
      });

      it('migration 0028: an account from before the asynchronous methods gets their sandbox routings, unless its merchant changed its CARD routing', async () => {
        const [kept, changed] = [await t.createOrganization(), await t.createOrganization()];
        // As such accounts were: the sandbox's CARD routing only; the second one's merchant added a condition set.
        for (const org of [kept, changed]) await t.db.query("DELETE FROM routings WHERE organization_id = $1 AND payment_method <> 'CARD'", [org.organization_id]);
        await t.db.query(`UPDATE routings SET condition_sets = '[{"sort_number":1}]'::jsonb WHERE organization_id = $1`, [changed.organization_id]);
        const { default: migration } = await import('../src/db/migrations/0028_sandbox_method_routings.js');
        for (let run = 0; run < 2; run++) await t.db.exec(migration.sql); // idempotent
        const methods = async (org: Credentials) => (await t.db.query<{ m: string }>('SELECT payment_method AS m FROM routings WHERE organization_id = $1 ORDER BY 1', [org.organization_id])).map((r) => r.m);
        expect(await methods(kept)).toEqual(['APPLE_PAY', 'BANK_TRANSFER', 'BOLETO', 'CARD', 'CASH', 'GOOGLE_PAY', 'MERCADO_PAGO_WALLET', 'OXXO', 'PAYPAL', 'PIX']);
        expect(await methods(changed)).toEqual(['CARD']);
        // The new routings are the CARD routing's route, served through the API like any other.
        const card = (await routings(t, kept.account_id, kept)).find((r) => r.payment_method === 'CARD')!;
        for (const r of await routings(t, kept.account_id, kept)) {
          expect(r.default_route.steps).toEqual(card.default_route.steps);
          expect(r.name).toBe(r.payment_method === 'CARD' ? card.name : `${r.payment_method} — SANDBOX_A then SANDBOX_B`);
        }
        // And they route: a PIX payment of the upgraded account is accepted.
        const pix = await t.clientFor(kept).POST('/payments', {
          body: { account_id: kept.account_id, description: 'upgraded', country: 'BR', merchant_order_id: `o-${randomUUID()}`, amount: { currency: 'BRL', value: 10 }, payment_method: { type: 'PIX' } },
          headers: { 'x-idempotency-key': randomUUID() },
        } as never);
        expect(pix.response.status).toBe(201);
      });

      it("a connection deleted while a new account's default routings are stored is refused (in use), never left named by a routing", async () => {
        const org = await t.createOrganization();
        const [a1] = await connections(t, org);
        // A second SANDBOX_A connection takes over the existing routings, so the first one (which
        // addDefaultRouting picks: the oldest) is named by no routing and may be deleted.
        const res = await t.fetch('/connections', {
          method: 'POST',
          headers: { ...json, ...asOrg(org), 'x-idempotency-key': randomUUID() },
          body: JSON.stringify({ provider_id: 'SANDBOX_A', name: 'A, second', environment: 'TEST' }),
        });
        expect(res.status).toBe(201);
        const a2 = (await res.json()) as ConnectionView;
        await t.db.query('UPDATE routings SET default_route = replace(default_route::text, $2, $3)::jsonb WHERE organization_id = $1', [org.organization_id, a1!.connection_id, a2.connection_id]);
        // The account's transaction stops after its default routings are written, before it commits.
        let stored!: () => void;
        let release!: () => void;
        const written = new Promise<void>((resolve) => (stored = resolve));
        const held = new Promise<void>((resolve) => (release = resolve));
        const account = createAccount(t.db, org.organization_id, 'racing store', {
          addToOrganization: async () => {},
          addToAccount: async (tx, organizationId, accountId) => {
            await addDefaultRouting(tx, organizationId, accountId);
            stored();
            await held;
          },
        });
        await written;
        // Meanwhile, a DELETE of the connection those routings name: it must wait for them (routes lock).
        const deleting = deleteConnection(t.db, org.organization_id, a1!.connection_id);
        const early = await Promise.race([deleting.then((r) => r.kind), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
        release();
        const [created, deleted] = await Promise.all([account, deleting]);
        expect(early).toBe('waiting');
        expect(deleted).toMatchObject({ kind: 'in_use' });
        expect((await routings(t, created!.account_id, org)).map((r) => r.default_route.steps[0]!.connection_id)).toContain(a1!.connection_id);
        const dangling = await t.db.query(
          `SELECT r.id FROM routings r CROSS JOIN LATERAL jsonb_array_elements(r.default_route->'steps') s
           JOIN provider_connections c ON c.id::text = s->>'connection_id'
           WHERE r.organization_id = $1 AND c.deleted_at IS NOT NULL`,
          [org.organization_id],
        );
        expect(dangling).toEqual([]);
      });

      it('stores credentials sealed, never in clear; they open to the sandbox acquirers’ forms', async () => {
        const org = await t.createOrganization();
        const rows = await t.db.query<{ row: string }>('SELECT row_to_json(c)::text AS row FROM provider_connections c WHERE organization_id = $1', [org.organization_id]);
        expect(rows).toHaveLength(2);
        for (const { row } of rows) expect(row).not.toMatch(/sk_sandbox_|merchant_|api_key|password/);
        const box = t.running.deps.services.connectionBox;
        const [a, b] = await connections(t, org);
        const openedA = await openConnection(t.db, box, org.organization_id, a!.connection_id);
        expect(openedA?.context.credentials.api_key).toMatch(/^sk_sandbox_[A-Za-z0-9_]{8,120}$/);
        expect(openedA).toMatchObject({ providerId: 'SANDBOX_A', enabled: true, context: { timeoutMs: 10_000 } });
        const openedB = await openConnection(t.db, box, org.organization_id, b!.connection_id);
        expect(openedB?.context.credentials).toEqual({ merchant_account: expect.stringMatching(/^merchant_[A-Za-z0-9_]{1,55}$/), password: expect.stringMatching(/^.{8,}$/) });
        // Another organization's connection is unknown; a ciphertext copied onto another connection does not open.
        expect(await openConnection(t.db, box, t.sandbox.organization_id, a!.connection_id)).toBeUndefined();
        const [sealedA] = await t.db.query<{ ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array; key_id: string }>(
          'SELECT ciphertext, iv, tag, key_id FROM provider_connections WHERE id = $1',
          [a!.connection_id],
        );
        expect(() => box.open(b!.connection_id, { ciphertext: sealedA!.ciphertext, iv: sealedA!.iv, tag: sealedA!.tag, keyId: sealedA!.key_id })).toThrow();
      });
    });

    describe('create, list, get, patch', () => {
      it('creates a routing with condition sets, lists it, reads it, changes it', async () => {
        const accountId = await bareAccount(t);
        const [a, b] = await connections(t);
        const A = { provider_id: 'SANDBOX_A', connection_id: a!.connection_id };
        const B = { provider_id: 'SANDBOX_B', connection_id: b!.connection_id };
        const body = {
          account_id: accountId,
          payment_method: 'CARD',
          name: 'Cards',
          default_route: { steps: [{ index: 2, ...B }, { index: 1, ...A }] },
          condition_sets: [
            { sort_number: 5, name: 'Big BRL', conditions: [{ type: 'CURRENCY', operator: 'IN', values: ['BRL'] }, { type: 'AMOUNT', operator: 'BETWEEN', min: 1000, max: 99999 }], route: { steps: [{ index: 1, ...B }] } },
            { sort_number: 1, name: 'Brazil', conditions: [{ type: 'COUNTRY', operator: 'IN', values: ['BR'] }], route: { steps: [{ index: 1, ...B }, { index: 2, ...A }] } },
          ],
        };
        const res = await postRouting(t, body);
        expect(res.status).toBe(201);
        const created = (await res.json()) as RoutingView & { warnings: string[] };
        expectSchema('Routing', created);
        expect(created.default_route.steps).toEqual([{ index: 1, ...A }, { index: 2, ...B }]);
        expect(created.condition_sets.map((s) => (s as { sort_number: number }).sort_number)).toEqual([1, 5]);
        expect(created.warnings).toEqual([]);

        expect(await routings(t, accountId)).toEqual([created]);
        const got = await t.fetch(`/routing/${created.id}`);
        expect(await got.json()).toEqual(created);
        const none = await t.fetch(`/routing?account_id=${accountId}&payment_method=PIX`);
        expect(await none.json()).toEqual([]);

        const changed = await patchRouting(t, created.id, { name: 'Cards v2', condition_sets: [] });
        expect(changed.status).toBe(200);
        const after = (await changed.json()) as RoutingView;
        expect(after).toMatchObject({ name: 'Cards v2', condition_sets: [], default_route: created.default_route });

        await expectProblem(await postRouting(t, body), 409, 'ROUTING_ALREADY_EXISTS');
      });

      it('lists connections and changes them (name, enabled, timeout_ms bounded)', async () => {
        const org = await t.createOrganization();
        const [a] = await connections(t, org);
        const patch = (body: unknown) =>
          t.fetch(`/connections/${a!.connection_id}`, { method: 'PATCH', headers: { ...json, ...asOrg(org) }, body: JSON.stringify(body) });
        const res = await patch({ enabled: false, timeout_ms: 2500, name: 'A, paused' });
        expect(res.status).toBe(200);
        const body = await res.json();
        expectSchema('Connection', body);
        expect(body).toMatchObject({ enabled: false, timeout_ms: 2500, name: 'A, paused', provider_id: 'SANDBOX_A' });
        for (const bad of [{ timeout_ms: 99 }, { timeout_ms: 60_001 }, {}, { credentials: {} }]) await expectProblem(await patch(bad), 400, 'INVALID_REQUEST');
        expect((await connections(t, org))[0]).toMatchObject({ enabled: false, timeout_ms: 2500 });
      });
    });

    describe('validation: each bad routing is refused, naming its field, and nothing is stored', () => {
      type Step = { index: number; provider_id: string; connection_id: string };
      const cases: { name: string; make: (A: Step, B: Step, accountId: string) => unknown; status: number; code: string; path?: RegExp }[] = [
        { name: 'steps not from 1', make: (A) => ({ default_route: { steps: [{ ...A, index: 2 }] } }), status: 422, code: 'ROUTING_VALIDATION_FAILED', path: /default_route\.steps\[0\]\.index/ },
        { name: 'steps with a gap', make: (A, B) => ({ default_route: { steps: [A, { ...B, index: 3 }] } }), status: 422, code: 'ROUTING_VALIDATION_FAILED', path: /default_route\.steps\[1\]\.index/ },
        { name: 'a connection twice', make: (A) => ({ default_route: { steps: [A, { ...A, index: 2 }] } }), status: 422, code: 'ROUTING_VALIDATION_FAILED', path: /default_route\.steps\[1\]\.connection_id/ },
        { name: 'an unknown connection', make: (A) => ({ default_route: { steps: [{ ...A, connection_id: randomUUID() }] } }), status: 422, code: 'ROUTING_VALIDATION_FAILED', path: /default_route\.steps\[0\]\.connection_id/ },
        { name: 'provider not the connection’s', make: (A) => ({ default_route: { steps: [{ ...A, provider_id: 'SANDBOX_B' }] } }), status: 422, code: 'ROUTING_VALIDATION_FAILED', path: /default_route\.steps\[0\]\.provider_id/ },
        { name: 'no steps', make: () => ({ default_route: { steps: [] } }), status: 400, code: 'INVALID_REQUEST', path: /default_route\/steps/ },
        { name: 'eleven steps', make: (A) => ({ default_route: { steps: Array.from({ length: 11 }, (_, i) => ({ ...A, index: i + 1 })) } }), status: 400, code: 'INVALID_REQUEST', path: /default_route\/steps/ },
        { name: 'a payment method no routing covers', make: () => ({ payment_method: 'SPEI' }), status: 400, code: 'INVALID_REQUEST', path: /payment_method/ },
        { name: 'an account of no organization of ours', make: () => ({ account_id: randomUUID() }), status: 403, code: 'INVALID_ACCOUNT_ID' },
        { name: 'name too long', make: () => ({ name: 'x'.repeat(256) }), status: 400, code: 'INVALID_REQUEST', path: /name/ },
        ...(
          [
            ['COUNTRY with a bad code', { type: 'COUNTRY', operator: 'IN', values: ['Brazil'] }, /conditions\[0\]\.values\[0\]/],
            ['CURRENCY with BETWEEN', { type: 'CURRENCY', operator: 'BETWEEN', values: ['BRL'] }, /conditions\[0\]\.operator/],
            ['CARD_BRAND not a vault brand', { type: 'CARD_BRAND', operator: 'IN', values: ['VISAA'] }, /conditions\[0\]\.values\[0\]/],
            ['IIN range of unequal lengths', { type: 'IIN', operator: 'IN_RANGE', from: '450799', to: '4508000' }, /conditions\[0\]\.to/],
            ['IIN range reversed', { type: 'IIN', operator: 'IN_RANGE', from: '450800', to: '450799' }, /conditions\[0\]\.to/],
            ['IIN STARTS_WITH not digits', { type: 'IIN', operator: 'STARTS_WITH', values: ['45a'] }, /conditions\[0\]\.values\[0\]/],
            ['AMOUNT without a CURRENCY condition', { type: 'AMOUNT', operator: 'BETWEEN', min: 1, max: 2 }, /conditions\[0\]/],
            ['AMOUNT min above max', { type: 'AMOUNT', operator: 'BETWEEN', min: 3, max: 2 }, /conditions\[0\]\.max/],
            ['METADATA without key', { type: 'METADATA', operator: 'IN', values: ['x'] }, /conditions\[0\]\.key/],
            ['METADATA EQUALS two values', { type: 'METADATA', key: 'k', operator: 'EQUALS', values: ['a', 'b'] }, /conditions\[0\]\.values/],
            ['a field of another kind', { type: 'COUNTRY', operator: 'IN', values: ['BR'], min: 1 }, /conditions\[0\]\.min/],
            ['an unknown kind', { type: 'WEEKDAY', operator: 'IN', values: ['MON'] }, /conditions\/0\/type/],
          ] as const
        ).map(([name, condition, path]) => ({
          name: `condition: ${name}`,
          make: (A: Step) => ({ condition_sets: [{ sort_number: 1, name: 'set', conditions: [condition], route: { steps: [A] } }] }),
          // The schema knows the kinds and operators; the fields each kind takes are the service's rule.
          ...(name === 'an unknown kind' ? { status: 400, code: 'INVALID_REQUEST' } : { status: 422, code: 'ROUTING_VALIDATION_FAILED' }),
          path,
        })),
        {
          name: 'two sets with one sort_number',
          make: (A) => ({
            condition_sets: [1, 2].map(() => ({ sort_number: 1, name: 's', conditions: [{ type: 'COUNTRY', operator: 'IN', values: ['BR'] }], route: { steps: [A] } })),
          }),
          status: 422,
          code: 'ROUTING_VALIDATION_FAILED',
          path: /condition_sets\[1\]\.sort_number/,
        },
      ];

      for (const c of cases) {
        it(`${c.name} → ${c.status} ${c.code}`, async () => {
          const accountId = await bareAccount(t);
          const [a, b] = await connections(t);
          const A = { index: 1, provider_id: 'SANDBOX_A', connection_id: a!.connection_id };
          const B = { index: 2, provider_id: 'SANDBOX_B', connection_id: b!.connection_id };
          const body = { account_id: accountId, payment_method: 'CARD', name: 'r', default_route: { steps: [A, B] }, ...(c.make(A, B, accountId) as object) };
          const problem = await expectProblem(await postRouting(t, body), c.status, c.code);
          if (c.path) expect(JSON.stringify(problem.errors ?? problem.messages)).toMatch(c.path);
          expect(await routings(t, accountId)).toEqual([]);
          // The same change by PATCH on the account's default routing is refused the same way and changes nothing.
          if (c.status !== 403 && !('payment_method' in (c.make(A, B, accountId) as object)) && !('name' in (c.make(A, B, accountId) as object))) {
            const routing = (await routings(t, t.sandbox.account_id)).find((r) => r.payment_method === 'CARD');
            const { account_id: _a, payment_method: _p, ...patchable } = body;
            await expectProblem(await patchRouting(t, routing!.id, patchable), c.status, c.code);
            expect((await routings(t, t.sandbox.account_id)).find((r) => r.id === routing!.id)).toEqual(routing);
          }
        });
      }
    });

    describe('another organization’s ids are unknown', () => {
      it('routing 404, its connections refused in steps, its accounts 403, its connections 404', async () => {
        const other = await t.createOrganization();
        const theirRouting = (await routings(t, other.account_id, other)).find((r) => r.payment_method === 'CARD');
        const [theirA] = await connections(t, other);
        await expectProblem(await t.fetch(`/routing/${theirRouting!.id}`), 404, 'ROUTING_NOT_FOUND');
        await expectProblem(await patchRouting(t, theirRouting!.id, { name: 'mine' }), 404, 'ROUTING_NOT_FOUND');
        await expectProblem(await t.fetch(`/routing?account_id=${other.account_id}`), 403, 'INVALID_ACCOUNT_ID');
        await expectProblem(await postRouting(t, { account_id: other.account_id, payment_method: 'CARD', name: 'x', default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: theirA!.connection_id }] } }), 403, 'INVALID_ACCOUNT_ID');
        const mine = (await routings(t, t.sandbox.account_id)).find((r) => r.payment_method === 'CARD');
        const refused = await expectProblem(
          await patchRouting(t, mine!.id, { default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: theirA!.connection_id }] } }),
          422,
          'ROUTING_VALIDATION_FAILED',
        );
        expect(JSON.stringify(refused.errors)).toMatch(/default_route\.steps\[0\]\.connection_id/);
        await expectProblem(
          await t.fetch(`/connections/${theirA!.connection_id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: false }) }),
          404,
          'CONNECTION_NOT_FOUND',
        );
        expect((await connections(t, other))[0]!.enabled).toBe(true);
        expect((await routings(t, other.account_id, other)).find((r) => r.id === theirRouting!.id)).toEqual(theirRouting);
      });
    });

    describe('planRoute', () => {
      const condition = (c: RoutingCondition) => [c];
      const table: { name: string; conditions: RoutingCondition[]; match: Partial<PaymentFacts>; miss: Partial<PaymentFacts> }[] = [
        { name: 'COUNTRY IN', conditions: condition({ type: 'COUNTRY', operator: 'IN', values: ['BR', 'CO'] }), match: { country: 'BR' }, miss: { country: 'MX' } },
        { name: 'COUNTRY NOT_IN', conditions: condition({ type: 'COUNTRY', operator: 'NOT_IN', values: ['BR'] }), match: { country: 'MX' }, miss: { country: 'BR' } },
        { name: 'CURRENCY IN', conditions: condition({ type: 'CURRENCY', operator: 'IN', values: ['BRL'] }), match: { currency: 'BRL' }, miss: { currency: 'USD' } },
        { name: 'CARD_BRAND IN', conditions: condition({ type: 'CARD_BRAND', operator: 'IN', values: ['MASTERCARD'] }), match: { brand: 'MASTERCARD' }, miss: { brand: 'VISA' } },
        { name: 'CARD_BRAND NOT_IN', conditions: condition({ type: 'CARD_BRAND', operator: 'NOT_IN', values: ['AMEX'] }), match: { brand: 'VISA' }, miss: { brand: 'AMEX' } },
        { name: 'IIN IN_RANGE (6 digits)', conditions: condition({ type: 'IIN', operator: 'IN_RANGE', from: '450799', to: '450800' }), match: { iin: '45080012' }, miss: { iin: '45080112' } },
        { name: 'IIN IN_RANGE (8 digits)', conditions: condition({ type: 'IIN', operator: 'IN_RANGE', from: '45079900', to: '45079999' }), match: { iin: '45079900' }, miss: { iin: '45078999' } },
        { name: 'IIN STARTS_WITH', conditions: condition({ type: 'IIN', operator: 'STARTS_WITH', values: ['51', '4507'] }), match: { iin: '45079900' }, miss: { iin: '41111111' } },
        { name: 'IIN of a payment without a card', conditions: condition({ type: 'IIN', operator: 'STARTS_WITH', values: ['4'] }), match: { iin: '41111111' }, miss: { iin: null } },
        {
          name: 'AMOUNT BETWEEN (with CURRENCY)',
          conditions: [{ type: 'CURRENCY', operator: 'IN', values: ['COP'] }, { type: 'AMOUNT', operator: 'BETWEEN', min: 100, max: 500.5 }],
          match: { amount: '500.50' },
          miss: { amount: '500.51' },
        },
        { name: 'METADATA EQUALS', conditions: condition({ type: 'METADATA', key: 'tier', operator: 'EQUALS', values: ['gold'] }), match: { metadata: [{ key: 'tier', value: 'gold' }] }, miss: { metadata: [{ key: 'tier', value: 'silver' }] } },
        { name: 'METADATA IN (key missing misses)', conditions: condition({ type: 'METADATA', key: 'tier', operator: 'IN', values: ['gold', 'silver'] }), match: { metadata: [{ key: 'tier', value: 'silver' }] }, miss: { metadata: [{ key: 'other', value: 'gold' }] } },
        {
          name: 'conditions AND together',
          conditions: [{ type: 'COUNTRY', operator: 'IN', values: ['BR'] }, { type: 'CARD_BRAND', operator: 'IN', values: ['VISA'] }],
          match: { country: 'BR', brand: 'VISA' },
          miss: { country: 'BR', brand: 'MASTERCARD' },
        },
      ];

      for (const row of table) {
        it(`${row.name}: the set's route when it matches, the default route when not`, async () => {
          const org = await t.createOrganization();
          const routing = (await routings(t, org.account_id, org)).find((r) => r.payment_method === 'CARD');
          const [a, b] = await connections(t, org);
          const BA = { steps: [{ index: 1, provider_id: 'SANDBOX_B', connection_id: b!.connection_id }, { index: 2, provider_id: 'SANDBOX_A', connection_id: a!.connection_id }] };
          const r = await updateRouting(t.db, org.organization_id, routing!.id, { condition_sets: [{ sort_number: 7, name: row.name, conditions: row.conditions, route: BA }] }, providersOf(t), catalogueOf(t));
          expect(r.kind === 'invalid' ? r.errors : []).toEqual([]);
          const hit = await planOf(t, org.organization_id, facts({ accountId: org.account_id, ...row.match }));
          expect(hit).toEqual({
            routingId: routing!.id,
            conditionSet: { sortNumber: 7, name: row.name },
            steps: [{ index: 1, providerId: 'SANDBOX_B', connectionId: b!.connection_id }, { index: 2, providerId: 'SANDBOX_A', connectionId: a!.connection_id }],
          });
          const miss = await planOf(t, org.organization_id, facts({ accountId: org.account_id, ...row.miss }));
          expect(miss).toEqual({
            routingId: routing!.id,
            conditionSet: null,
            steps: [{ index: 1, providerId: 'SANDBOX_A', connectionId: a!.connection_id }, { index: 2, providerId: 'SANDBOX_B', connectionId: b!.connection_id }],
          });
        });
      }

      it('the lowest sort_number that matches wins; disabled connections are skipped; none left → null', async () => {
        const org = await t.createOrganization();
        const routing = (await routings(t, org.account_id, org)).find((r) => r.payment_method === 'CARD');
        const [a, b] = await connections(t, org);
        const only = (c: ConnectionView) => ({ steps: [{ index: 1, provider_id: c.provider_id, connection_id: c.connection_id }] });
        const br: RoutingCondition = { type: 'COUNTRY', operator: 'IN', values: ['BR'] };
        await updateRouting(t.db, org.organization_id, routing!.id, {
          condition_sets: [
            { sort_number: 20, name: 'second', conditions: [br], route: only(a!) },
            { sort_number: 10, name: 'first', conditions: [br], route: only(b!) },
          ],
        }, providersOf(t), catalogueOf(t));
        const plan = await planOf(t, org.organization_id, facts({ accountId: org.account_id, country: 'BR' }));
        expect(plan?.conditionSet).toEqual({ sortNumber: 10, name: 'first' });
        expect(routingRulesOf(plan!)).toEqual({
          smart_routing: false,
          monitors: true,
          condition: { id: 10, name: 'first', description: expect.stringContaining(routing!.id) },
          routing_id: routing!.id,
        });

        const disable = (c: ConnectionView) =>
          t.fetch(`/connections/${c.connection_id}`, { method: 'PATCH', headers: { ...json, ...asOrg(org) }, body: JSON.stringify({ enabled: false }) });
        expect((await disable(a!)).status).toBe(200);
        const def = await planOf(t, org.organization_id, facts({ accountId: org.account_id }));
        expect(def?.steps).toEqual([{ index: 2, providerId: 'SANDBOX_B', connectionId: b!.connection_id }]);
        expect(routingRulesOf(def!).condition).toMatchObject({ id: 0, name: 'Default route' });
        expect(await planOf(t, org.organization_id, facts({ accountId: org.account_id, country: 'BR' }))).toMatchObject({ steps: [{ providerId: 'SANDBOX_B' }] });
        expect((await disable(b!)).status).toBe(200);
        expect(await planOf(t, org.organization_id, facts({ accountId: org.account_id }))).toBeNull();
      });

      it('null for a payment method or account without a routing, and for another organization’s account', async () => {
        const org = await t.createOrganization();
        expect(await planOf(t, org.organization_id, facts({ accountId: org.account_id, paymentMethod: 'SPEI' }))).toBeNull();
        expect(await planOf(t, org.organization_id, facts({ accountId: t.sandbox.account_id }))).toBeNull();
        expect(await planOf(t, t.sandbox.organization_id, facts({ accountId: await bareAccount(t) }))).toBeNull();
      });
    });
  });
}

/**
 * What routing makes of the providers' capabilities (GET /v1/providers), over a catalogue of made-up
 * providers (the sandbox ones serve everything, so over HTTP nothing could be refused or warned): a step
 * whose provider does not serve the routing's payment method is refused naming the step; a CURRENCY or
 * COUNTRY `IN` value a step's provider does not serve is a warning line. connections.test.ts checks the
 * real providers' answer.
 */
describe('routing against provider capabilities', () => {
  const describe_ = (id: string, over: Partial<ProviderDescription['capabilities']>): ProviderDescription => ({
    id,
    displayName: id,
    credentialFields: [],
    capabilities: {
      paymentMethods: ['CARD'],
      currencies: 'ANY',
      countries: 'ANY',
      features: { authorizeCapture: true, partialCapture: true, void: true, partialRefund: true, multipleRefunds: true, webhooks: true, disputeEvidence: true, additionalEvidence: true },
      ...over,
    },
  });
  const catalogue = new Map([
    ['CARDS_ANYWHERE', describe_('CARDS_ANYWHERE', {})],
    ['PIX_ONLY', describe_('PIX_ONLY', { paymentMethods: ['PIX'], currencies: ['BRL'], countries: ['BR'] })],
    ['EUROPE', describe_('EUROPE', { currencies: ['EUR', 'GBP'], countries: ['DE', 'FR', 'GB'] })],
  ]);
  const connection = (id: string, provider: string) => [id, { id, provider_id: provider, enabled: true } as ConnectionRow] as const;
  const targets = (paymentMethod = 'CARD') => ({
    connections: new Map([connection('c-any', 'CARDS_ANYWHERE'), connection('c-pix', 'PIX_ONLY'), connection('c-eu', 'EUROPE')]),
    providers: { get: (id: string) => (catalogue.has(id) ? ({} as never) : undefined) },
    catalogue: { get: (id: string) => catalogue.get(id) },
    paymentMethod,
  });
  const step = (index: number, provider: string, connectionId: string) => ({ index, provider_id: provider, connection_id: connectionId });

  it.each([
    { name: 'every step serves CARD', steps: [step(1, 'CARDS_ANYWHERE', 'c-any'), step(2, 'EUROPE', 'c-eu')], method: 'CARD', errors: [] },
    {
      name: 'a PIX-only provider on a CARD routing, named by its step',
      steps: [step(1, 'CARDS_ANYWHERE', 'c-any'), step(2, 'PIX_ONLY', 'c-pix')],
      method: 'CARD',
      errors: [{ path: 'default_route.steps[1].provider_id', message: 'PIX_ONLY does not serve CARD payments (GET /v1/providers lists what each provider serves)' }],
    },
    { name: 'the PIX-only provider on a PIX routing', steps: [step(1, 'PIX_ONLY', 'c-pix')], method: 'PIX', errors: [] },
  ])('$name', ({ steps, method, errors }) => {
    const found: { path: string; message: string }[] = [];
    validateRoute({ steps }, 'default_route', targets(method), found);
    expect(found).toEqual(errors);
  });

  it('warns for a CURRENCY or COUNTRY value a step cannot serve, one line per step and condition; NOT_IN and other kinds never', () => {
    const set = (conditions: RoutingCondition[], steps: ReturnType<typeof step>[]): StoredConditionSet => ({ sort_number: 1, name: 's', conditions, route: { steps } });
    const sets = [
      set(
        [
          { type: 'CURRENCY', operator: 'IN', values: ['EUR', 'USD', 'JPY'] },
          { type: 'COUNTRY', operator: 'IN', values: ['FR'] },
          { type: 'COUNTRY', operator: 'NOT_IN', values: ['US'] },
          { type: 'CARD_BRAND', operator: 'IN', values: ['VISA'] },
        ],
        [step(2, 'CARDS_ANYWHERE', 'c-any'), step(1, 'EUROPE', 'c-eu')],
      ),
      set([{ type: 'COUNTRY', operator: 'IN', values: ['BR', 'AR'] }], [step(1, 'EUROPE', 'c-eu'), step(2, 'UNKNOWN', 'c-x')]),
    ];
    expect(routingWarnings(sets, { get: (id) => catalogue.get(id) })).toEqual([
      'condition_sets[0].conditions[0]: EUROPE (step 1) does not serve currency USD, JPY',
      'condition_sets[1].conditions[0]: EUROPE (step 1) does not serve country BR, AR',
    ]);
    // Bounded as the spec says: at most 20 lines of at most 255 characters.
    const many = Array.from({ length: 30 }, () => sets[1]!);
    const lines = routingWarnings(many, { get: (id) => catalogue.get(id) });
    expect(lines).toHaveLength(20);
    expect(lines.at(-1)).toBe('and 11 more');
    const long = routingWarnings([set([{ type: 'CURRENCY', operator: 'IN', values: Array.from({ length: 100 }, (_, i) => `Q${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + Math.floor(i / 26))}`) }], [step(1, 'EUROPE', 'c-eu')])], {
      get: (id) => catalogue.get(id),
    });
    expect(long[0]!.length).toBe(255);
    expect(long[0]!.endsWith('…')).toBe(true);
  });
});
