/**
 * Connections a merchant creates and deletes, and the capability matrix (issue 22 §1), over real HTTP on
 * each backend: POST /v1/connections (idempotent; one credentials shape per provider, a wrong one 400
 * naming the field and storing nothing; credentials of the other environment 422; sealed, never
 * returned), DELETE /v1/connections/{id} (409 naming the routings while a step uses it; afterwards gone
 * from every list and route, while the follow-ups of a payment made through it still go through it),
 * GET /v1/providers (what the service runs; docs/providers/README.md is kept equal to it), and the
 * credential rules table. Tests that need a real connector run once it is in CONNECTORS.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Schemas } from '@payorch/types';
import { describe, expect, it } from 'vitest';
import { CONNECTORS } from '../src/providers/connectors.js';
import { SANDBOX_PROVIDERS } from '../src/providers/sandbox/capabilities.js';
import { addConnection, sandboxCredentials } from '../src/routing/connections.js';
import { credentialProblems } from '../src/routing/credential-rules.js';
import { expectProblem, expectSchema } from './support/assertions.js';
import { renderCapabilityMatrix, withMatrix } from './support/capability-matrix.js';
import { routeCards } from './support/connectors.js';
import { backends, useServer, type TestServer } from './support/harness.js';
import { authorizedPayment, cardTransactionId, getPayment, postLifecycle } from './support/payments.js';

const json = { 'content-type': 'application/json' };
const DOCS_PAGE = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/providers/README.md');
const has = (id: string) => CONNECTORS.some((c) => c.id === id);

type Connection = Schemas['Connection'];

// Well-formed credentials of each provider (their formats; no real account's).
const STRIPE_TEST = { secret_key: `sk_test_${'a1B2c3D4'.repeat(4)}`, webhook_secret: `whsec_${'Zx9Yw8Vu'.repeat(4)}` };
const ADYEN = { api_key: `AQEyhmfx${'K0lMnOpQ'.repeat(6)}`, merchant_account: 'ShopBrazilECOM', hmac_key: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' };
const MERCADO_PAGO_TEST = { access_token: 'TEST-1234567890123456-112612-0123456789abcdef0123456789abcdef-123456789', webhook_secret: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' };
const CREDENTIALS: Record<string, Record<string, string>> = { STRIPE: STRIPE_TEST, ADYEN, MERCADO_PAGO: MERCADO_PAGO_TEST };
/** A connector that lists its currencies (not 'ANY'): a routing condition can name one it does not serve. */
const LIMITED = CONNECTORS.find((c) => c.capabilities.currencies !== 'ANY' && CREDENTIALS[c.id]);

const post = (t: TestServer, body: unknown, key: string = randomUUID()) =>
  t.fetch('/connections', { method: 'POST', headers: { ...json, 'x-idempotency-key': key }, body: JSON.stringify(body) });
const remove = (t: TestServer, id: string, headers: Record<string, string> = {}) => t.fetch(`/connections/${id}`, { method: 'DELETE', headers });

async function created(res: Response): Promise<Connection> {
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const body = JSON.parse(text) as Connection;
  expectSchema('Connection', body);
  return body;
}

async function listed(t: TestServer): Promise<Connection[]> {
  const res = await t.fetch('/connections');
  expect(res.status).toBe(200);
  return (await res.json()) as Connection[];
}

const countConnections = async (t: TestServer) =>
  Number((await t.db.query<{ n: number | string }>('SELECT count(*) AS n FROM provider_connections WHERE organization_id = $1', [t.sandbox.organization_id]))[0]!.n);

/** The sandbox account's CARD routing back to what it starts with: SANDBOX_A then SANDBOX_B, through the first two connections. */
async function routeDefault(t: TestServer): Promise<void> {
  const [a, b] = (await listed(t)).filter((c) => c.provider_id === 'SANDBOX_A' || c.provider_id === 'SANDBOX_B');
  await routeCards(t, [a!, b!].map((c) => ({ provider_id: c.provider_id, connection_id: c.connection_id })));
}

describe("the spec's credentials oneOf and the providers' credential fields", () => {
  type SchemaDoc = { components: { schemas: Record<string, { discriminator?: { mapping: Record<string, string> }; properties?: Record<string, { $ref?: string }>; required?: string[] }> } };
  const spec = createRequire(import.meta.url)('@payorch/types/openapi.json') as SchemaDoc;
  const schemaAt = (ref: string) => spec.components.schemas[ref.replace('#/components/schemas/', '')]!;
  const mapping = spec.components.schemas.ConnectionCreateRequest!.discriminator!.mapping;
  it.each([...SANDBOX_PROVIDERS, ...CONNECTORS].map((p) => ({ id: p.id, fields: p.credentialFields })))(
    '$id: a variant of ConnectionCreateRequest whose credentials hold its credentialFields (every required one among them)',
    ({ id, fields }) => {
      expect(mapping[id], `add a ${id} variant to spec/components/schemas/ConnectionCreateRequest.yaml`).toBeDefined();
      const credentials = schemaAt(schemaAt(mapping[id]!).properties!.credentials!.$ref!);
      // An optional member (Adyen's live_url_prefix) may or may not be listed; nothing else may differ.
      expect(Object.keys(credentials.properties ?? {})).toEqual(expect.arrayContaining([...fields]));
      expect([...fields]).toEqual(expect.arrayContaining(credentials.required ?? []));
    },
  );
});

describe('credential rules (what the schema cannot say)', () => {
  const table: { name: string; provider: string; environment: 'TEST' | 'LIVE'; credentials: Record<string, string>; paths: string[] }[] = [
    { name: 'a Stripe test key on TEST', provider: 'STRIPE', environment: 'TEST', credentials: STRIPE_TEST, paths: [] },
    { name: 'a Stripe live key on TEST', provider: 'STRIPE', environment: 'TEST', credentials: { ...STRIPE_TEST, secret_key: 'sk_live_0123456789abcdef' }, paths: ['/body/credentials/secret_key'] },
    { name: 'a Stripe restricted live key on TEST', provider: 'STRIPE', environment: 'TEST', credentials: { ...STRIPE_TEST, secret_key: 'rk_live_0123456789abcdef' }, paths: ['/body/credentials/secret_key'] },
    { name: 'a Stripe test key on LIVE', provider: 'STRIPE', environment: 'LIVE', credentials: STRIPE_TEST, paths: ['/body/credentials/secret_key'] },
    { name: 'a Stripe live key on LIVE', provider: 'STRIPE', environment: 'LIVE', credentials: { ...STRIPE_TEST, secret_key: 'sk_live_0123456789abcdef' }, paths: [] },
    { name: 'Adyen on TEST without a live URL prefix', provider: 'ADYEN', environment: 'TEST', credentials: ADYEN, paths: [] },
    { name: 'Adyen on TEST with a live URL prefix', provider: 'ADYEN', environment: 'TEST', credentials: { ...ADYEN, live_url_prefix: '1797a841fbb37ca7-Shop' }, paths: ['/body/credentials/live_url_prefix'] },
    { name: 'Adyen on LIVE without a live URL prefix', provider: 'ADYEN', environment: 'LIVE', credentials: ADYEN, paths: ['/body/credentials/live_url_prefix'] },
    { name: 'Adyen on LIVE with a live URL prefix', provider: 'ADYEN', environment: 'LIVE', credentials: { ...ADYEN, live_url_prefix: '1797a841fbb37ca7-Shop' }, paths: [] },
    { name: 'a Mercado Pago TEST- token on TEST', provider: 'MERCADO_PAGO', environment: 'TEST', credentials: MERCADO_PAGO_TEST, paths: [] },
    { name: 'a Mercado Pago TEST- token on LIVE', provider: 'MERCADO_PAGO', environment: 'LIVE', credentials: MERCADO_PAGO_TEST, paths: ['/body/credentials/access_token'] },
    { name: 'a Mercado Pago APP_USR- token on LIVE', provider: 'MERCADO_PAGO', environment: 'LIVE', credentials: { ...MERCADO_PAGO_TEST, access_token: MERCADO_PAGO_TEST.access_token.replace('TEST-', 'APP_USR-') }, paths: [] },
    { name: 'a sandbox connection on TEST', provider: 'SANDBOX_A', environment: 'TEST', credentials: {}, paths: [] },
    { name: 'a sandbox connection on LIVE', provider: 'SANDBOX_B', environment: 'LIVE', credentials: {}, paths: ['/body/environment'] },
  ];
  it.each(table)('$name', ({ provider, environment, credentials, paths }) => {
    expect(credentialProblems(provider, environment, credentials).map((e) => e.path)).toEqual(paths);
  });
});

for (const backend of backends()) {
  describe(`connections on ${backend}`, () => {
    const t = useServer(backend);

    describe('GET /v1/providers', () => {
      it('lists what the service runs (the sandbox providers and every connector), each as the spec says; 401 without credentials', async () => {
        const res = await t.fetch('/providers');
        expect(res.status).toBe(200);
        const providers = (await res.json()) as Schemas['Provider'][];
        expectSchema('ProviderList', providers);
        expect(providers.map((p) => p.provider_id)).toEqual(t.running.deps.services.providers.ids());
        expect(providers.map((p) => p.provider_id)).toEqual(['SANDBOX_A', 'SANDBOX_B', ...CONNECTORS.map((c) => c.id)]);
        for (const c of CONNECTORS) {
          const p = providers.find((x) => x.provider_id === c.id)!;
          expect(p.payment_methods).toEqual(c.capabilities.paymentMethods);
          expect(p.credential_fields).toEqual(c.credentialFields);
        }
        expect(providers[0]).toMatchObject({ payment_methods: ['CARD', 'PIX', 'BANK_TRANSFER', 'OXXO', 'BOLETO', 'CASH', 'PAYPAL', 'MERCADO_PAGO_WALLET', 'APPLE_PAY', 'GOOGLE_PAY'], currencies: 'ANY', countries: 'ANY', credential_fields: ['api_key'] });
        expect(providers[1]).toMatchObject({ credential_fields: ['merchant_account', 'password'] });
        await expectProblem(await t.fetch('/providers', { credentials_: false }), 401, 'INVALID_CREDENTIALS');
      });

      it("a routing through the sandbox providers has no warnings (they serve every currency and country)", async () => {
        const routing = ((await (await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`)).json()) as Schemas['Routing'][])[0]!;
        const [a] = routing.default_route.steps;
        const res = await t.fetch(`/routing/${routing.id}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ condition_sets: [{ sort_number: 1, name: 'odd', conditions: [{ type: 'CURRENCY', operator: 'IN', values: ['XTS'] }, { type: 'COUNTRY', operator: 'IN', values: ['AQ'] }], route: { steps: [a] } }] }),
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as Schemas['Routing']).warnings).toEqual([]);
        await t.fetch(`/routing/${routing.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ condition_sets: [] }) });
      });

      it('docs/providers/README.md shows the same matrix (UPDATE_PROVIDER_DOCS=1 rewrites it)', async () => {
        const providers = (await (await t.fetch('/providers')).json()) as Schemas['Provider'][];
        const page = await readFile(DOCS_PAGE, 'utf8');
        const expected = withMatrix(page, renderCapabilityMatrix(providers));
        if (process.env.UPDATE_PROVIDER_DOCS === '1' && expected !== page) await writeFile(DOCS_PAGE, expected);
        else expect(page, 'docs/providers/README.md differs from GET /v1/providers: run UPDATE_PROVIDER_DOCS=1 npx vitest run test/connections.test.ts').toBe(expected);
      });
    });

    describe('POST /v1/connections', () => {
      it('creates a sandbox connection (credentials generated or given, sealed, never returned), idempotently', async () => {
        const password = `pw-${randomUUID()}`;
        t.rememberSecret(password, 'a SANDBOX_B password given to POST /connections');
        const body = { provider_id: 'SANDBOX_B', name: 'B, second account', environment: 'TEST', timeout_ms: 4000, credentials: { merchant_account: 'merchant_second', password } };
        const key = randomUUID();
        const res = await post(t, body, key);
        const b = await created(res.clone());
        expect(b).toMatchObject({ provider_id: 'SANDBOX_B', name: 'B, second account', environment: 'TEST', enabled: true, timeout_ms: 4000 });
        expect(await res.text()).not.toContain(password);
        // The same key and body: the same connection, replayed; another body under it: refused.
        const again = await post(t, body, key);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect((await created(again)).connection_id).toBe(b.connection_id);
        await expectProblem(await post(t, { ...body, name: 'other' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
        const missingKey = await t.fetch('/connections', { method: 'POST', headers: json, body: JSON.stringify(body) });
        expect(missingKey.status).toBe(400);

        const a = await created(await post(t, { provider_id: 'SANDBOX_A', name: 'A, generated key', environment: 'TEST' }));
        expect(a).toMatchObject({ provider_id: 'SANDBOX_A', environment: 'TEST', timeout_ms: 10_000 });
        const list = await listed(t);
        expect(list.map((c) => c.connection_id)).toEqual(expect.arrayContaining([a.connection_id, b.connection_id]));
        expect(list.find((c) => c.connection_id === b.connection_id)).toEqual(b);
        // Sealed: the row holds ciphertext only (the teardown scan also looks for the password everywhere).
        const [row] = await t.db.query<{ ciphertext: Uint8Array }>('SELECT ciphertext FROM provider_connections WHERE id = $1', [b.connection_id]);
        expect(Buffer.from(row!.ciphertext).toString('latin1')).not.toContain(password);
        // Its credentials open for a provider call, as given.
        const opened = await t.running.deps.services.orchestration.routing.openConnection(t.db, t.sandbox.organization_id, b.connection_id);
        expect(opened?.context.credentials).toEqual({ merchant_account: 'merchant_second', password });
        expect(opened?.context.environment).toBe('TEST');
        for (const id of [a.connection_id, b.connection_id]) expect((await remove(t, id)).status).toBe(204);
      });

      const bad: { name: string; body: Record<string, unknown>; paths: string[] }[] = [
        { name: 'a Stripe key of no Stripe format', body: { provider_id: 'STRIPE', credentials: { ...STRIPE_TEST, secret_key: 'pk_test_0123456789abcdef' } }, paths: ['/body/credentials/secret_key'] },
        { name: 'a webhook secret without whsec_', body: { provider_id: 'STRIPE', credentials: { ...STRIPE_TEST, webhook_secret: 'secret_0123456789abcdef' } }, paths: ['/body/credentials/webhook_secret'] },
        {
          name: "Adyen's fields for Stripe",
          body: { provider_id: 'STRIPE', credentials: ADYEN },
          paths: ['/body/credentials/secret_key', '/body/credentials/webhook_secret', '/body/credentials/api_key', '/body/credentials/merchant_account', '/body/credentials/hmac_key'],
        },
        { name: 'an Adyen HMAC key not in hex', body: { provider_id: 'ADYEN', credentials: { ...ADYEN, hmac_key: 'z'.repeat(64) } }, paths: ['/body/credentials/hmac_key'] },
        { name: 'a Mercado Pago connection without its webhook secret', body: { provider_id: 'MERCADO_PAGO', credentials: { access_token: MERCADO_PAGO_TEST.access_token } }, paths: ['/body/credentials/webhook_secret'] },
        { name: 'a credential past its maxLength', body: { provider_id: 'STRIPE', credentials: { ...STRIPE_TEST, secret_key: `sk_test_${'a'.repeat(300)}` } }, paths: ['/body/credentials/secret_key'] },
        { name: 'no credentials for Stripe', body: { provider_id: 'STRIPE' }, paths: ['/body/credentials'] },
        { name: 'a provider id the API does not define', body: { provider_id: 'PAYPAL', credentials: STRIPE_TEST }, paths: ['/body/provider_id'] },
        { name: 'no provider id', body: { provider_id: undefined }, paths: ['/body/provider_id'] },
        { name: 'an environment other than TEST or LIVE', body: { provider_id: 'SANDBOX_A', environment: 'PROD' }, paths: ['/body/environment'] },
        { name: 'a timeout below 100 ms', body: { provider_id: 'SANDBOX_A', timeout_ms: 50 }, paths: ['/body/timeout_ms'] },
        { name: 'an empty name', body: { provider_id: 'SANDBOX_A', name: '' }, paths: ['/body/name'] },
        { name: 'a member the request does not have', body: { provider_id: 'SANDBOX_A', enabled: false }, paths: ['/body/enabled'] },
      ];
      it.each(bad)('a wrong shape is 400 naming the field, nothing stored: $name', async ({ body, paths }) => {
        const before = await countConnections(t);
        const problem = await expectProblem(await post(t, { name: 'bad', environment: 'TEST', ...body }), 400, 'INVALID_REQUEST');
        expect([...new Set((problem.errors as { path: string }[]).map((e) => e.path))].sort()).toEqual([...paths].sort());
        expect(await countConnections(t)).toBe(before);
      });

      it('a sandbox connection on LIVE is 422 CONNECTION_VALIDATION_FAILED naming the field, nothing stored', async () => {
        const before = await countConnections(t);
        const problem = await expectProblem(await post(t, { provider_id: 'SANDBOX_A', name: 'live?', environment: 'LIVE' }), 422, 'CONNECTION_VALIDATION_FAILED');
        expect(problem.errors).toEqual([{ path: '/body/environment', message: 'must be TEST: the sandbox providers move no money' }]);
        expect(await countConnections(t)).toBe(before);
      });

      it('an organization has at most 100 live connections: one more is 409 CONNECTION_LIMIT_REACHED (concurrent creates too), nothing stored; a delete frees a place', async () => {
        const org = await t.createOrganization();
        const headers = (key = randomUUID()) => ({ ...json, 'x-idempotency-key': key, 'public-api-key': org.public_api_key, 'private-secret-key': org.private_secret_key });
        const create = (name: string) => t.fetch('/connections', { method: 'POST', headers: headers(), body: JSON.stringify({ provider_id: 'SANDBOX_A', name, environment: 'TEST' }) });
        const live = async () =>
          Number((await t.db.query<{ n: number | string }>('SELECT count(*) AS n FROM provider_connections WHERE organization_id = $1 AND deleted_at IS NULL', [org.organization_id]))[0]!.n);
        // The two sandbox connections, and 97 more: 99.
        const box = t.running.deps.services.connectionBox;
        for (let i = 0; i < 97; i++) await addConnection(t.db, box, org.organization_id, { providerId: 'SANDBOX_A', name: `filler ${i}`, credentials: sandboxCredentials('SANDBOX_A') });
        expect(await live()).toBe(99);
        // Two at once for the last place: one is stored, the other refused.
        const racing = await Promise.all([create('last place 1'), create('last place 2')]);
        expect(racing.map((r) => r.status).sort()).toEqual([201, 409]);
        await expectProblem(racing.find((r) => r.status === 409)!, 409, 'CONNECTION_LIMIT_REACHED');
        const refused = await expectProblem(await create('one too many'), 409, 'CONNECTION_LIMIT_REACHED');
        expect(refused.detail).toContain('at most 100 connections');
        expect(await live()).toBe(100);
        // The list holds every one of them, within the spec's ConnectionList (maxItems 100).
        const res = await t.fetch('/connections', { headers: headers() });
        expect(res.status).toBe(200);
        const list = (await res.json()) as Connection[];
        expectSchema('ConnectionList', list);
        expect(list).toHaveLength(100);
        // A deleted one does not count.
        const spare = list.find((c) => c.name === 'filler 0')!;
        expect((await t.fetch(`/connections/${spare.connection_id}`, { method: 'DELETE', headers: headers() })).status).toBe(204);
        expect((await create('in the freed place')).status).toBe(201);
        await expectProblem(await create('one too many again'), 409, 'CONNECTION_LIMIT_REACHED');
      });

      describe.skipIf(!has('STRIPE'))('to Stripe (once its connector is in the service)', () => {
        it('creates a TEST connection with a test key; a live key on TEST is 422 naming credentials.secret_key', async () => {
          for (const value of Object.values(STRIPE_TEST)) t.rememberSecret(value, 'a Stripe credential given to POST /connections');
          const c = await created(await post(t, { provider_id: 'STRIPE', name: 'Stripe test', environment: 'TEST', credentials: STRIPE_TEST }));
          expect(c).toMatchObject({ provider_id: 'STRIPE', environment: 'TEST', enabled: true });
          const live = { ...STRIPE_TEST, secret_key: `sk_live_${'q1W2e3R4'.repeat(4)}` };
          t.rememberSecret(live.secret_key, 'a Stripe live key');
          const problem = await expectProblem(await post(t, { provider_id: 'STRIPE', name: 'mixed', environment: 'TEST', credentials: live }), 422, 'CONNECTION_VALIDATION_FAILED');
          expect((problem.errors as { path: string }[]).map((e) => e.path)).toEqual(['/body/credentials/secret_key']);
          expect((await remove(t, c.connection_id)).status).toBe(204);
        });
      });

      describe.skipIf(!has('ADYEN'))('to Adyen (once its connector is in the service)', () => {
        it('a LIVE connection needs live_url_prefix (422 naming it), and is created with it', async () => {
          for (const value of Object.values(ADYEN)) t.rememberSecret(value, 'an Adyen credential given to POST /connections');
          const problem = await expectProblem(await post(t, { provider_id: 'ADYEN', name: 'Adyen live', environment: 'LIVE', credentials: ADYEN }), 422, 'CONNECTION_VALIDATION_FAILED');
          expect((problem.errors as { path: string }[]).map((e) => e.path)).toEqual(['/body/credentials/live_url_prefix']);
          const c = await created(await post(t, { provider_id: 'ADYEN', name: 'Adyen live', environment: 'LIVE', credentials: { ...ADYEN, live_url_prefix: '1797a841fbb37ca7-Shop' } }));
          expect(c).toMatchObject({ provider_id: 'ADYEN', environment: 'LIVE' });
          expect((await remove(t, c.connection_id)).status).toBe(204);
        });
      });
    });

    describe.skipIf(!LIMITED)('routing through a real provider that does not serve every currency', () => {
      it("warns for a CURRENCY condition it cannot serve, on the routing's answer and when read again", async () => {
        const provider = LIMITED!;
        const credentials = CREDENTIALS[provider.id]!;
        for (const value of Object.values(credentials)) t.rememberSecret(value, `a ${provider.id} credential`);
        const c = await created(await post(t, { provider_id: provider.id, name: `${provider.id} test`, environment: 'TEST', credentials }));
        const unserved = ['XTS', 'XXX', 'XAU'].find((code) => !(provider.capabilities.currencies as readonly string[]).includes(code))!;
        const routing = ((await (await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`)).json()) as { id: string }[])[0]!;
        const conditionSets = [
          { sort_number: 1, name: 'odd currency', conditions: [{ type: 'CURRENCY', operator: 'IN', values: [unserved] }], route: { steps: [{ index: 1, provider_id: provider.id, connection_id: c.connection_id }] } },
        ];
        const res = await t.fetch(`/routing/${routing.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ condition_sets: conditionSets }) });
        expect(res.status, await res.clone().text()).toBe(200);
        const expected = [`condition_sets[0].conditions[0]: ${provider.id} (step 1) does not serve currency ${unserved}`];
        expect(((await res.json()) as Schemas['Routing']).warnings).toEqual(expected);
        expect(((await (await t.fetch(`/routing/${routing.id}`)).json()) as Schemas['Routing']).warnings).toEqual(expected);
        await t.fetch(`/routing/${routing.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ condition_sets: [] }) });
        expect((await remove(t, c.connection_id)).status).toBe(204);
      });
    });

    describe('DELETE /v1/connections/{connection_id}', () => {
      it('is refused with 409 CONNECTION_IN_USE naming the routing while a step uses it; nothing changes', async () => {
        const [a] = await listed(t);
        const routing = ((await (await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`)).json()) as { id: string }[])[0]!;
        const problem = await expectProblem(await remove(t, a!.connection_id), 409, 'CONNECTION_IN_USE');
        expect(problem.detail).toContain(routing.id);
        expect((await listed(t)).map((c) => c.connection_id)).toContain(a!.connection_id);
      });

      it('404 for an unknown connection, one of another organization, or one already deleted', async () => {
        await expectProblem(await remove(t, randomUUID()), 404, 'CONNECTION_NOT_FOUND');
        const other = await t.createOrganization();
        const theirs = (await (await t.fetch('/connections', { headers: { 'public-api-key': other.public_api_key, 'private-secret-key': other.private_secret_key } })).json()) as Connection[];
        await expectProblem(await remove(t, theirs[0]!.connection_id), 404, 'CONNECTION_NOT_FOUND');
        const c = await created(await post(t, { provider_id: 'SANDBOX_A', name: 'short-lived', environment: 'TEST' }));
        expect((await remove(t, c.connection_id)).status).toBe(204);
        await expectProblem(await remove(t, c.connection_id), 404, 'CONNECTION_NOT_FOUND');
      });

      it('afterwards it is in no list, cannot be changed or routed to; follow-ups of its earlier payments still go through it', async () => {
        const mine = await created(await post(t, { provider_id: 'SANDBOX_A', name: 'A, to be deleted', environment: 'TEST' }));
        // A payment authorized through it alone.
        await routeCards(t, [{ provider_id: 'SANDBOX_A', connection_id: mine.connection_id }]);
        const payment = await authorizedPayment(t);
        const authorization = await cardTransactionId(t, payment.id);
        const through = async (transactionId: string) =>
          (await t.db.query<{ connection_id: string }>('SELECT connection_id FROM payment_transactions WHERE id = $1', [transactionId]))[0]?.connection_id;
        expect(await through(authorization)).toBe(mine.connection_id);
        // Out of the routing, then deleted.
        await routeDefault(t);
        expect((await remove(t, mine.connection_id)).status).toBe(204);
        expect((await listed(t)).map((c) => c.connection_id)).not.toContain(mine.connection_id);
        await expectProblem(
          await t.fetch(`/connections/${mine.connection_id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: true }) }),
          404,
          'CONNECTION_NOT_FOUND',
        );
        const routing = ((await (await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=CARD`)).json()) as { id: string }[])[0]!;
        const named = await t.fetch(`/routing/${routing.id}`, {
          method: 'PATCH',
          headers: json,
          body: JSON.stringify({ default_route: { steps: [{ index: 1, provider_id: 'SANDBOX_A', connection_id: mine.connection_id }] } }),
        });
        const refused = await expectProblem(named, 422, 'ROUTING_VALIDATION_FAILED');
        expect(refused.errors).toEqual([expect.objectContaining({ path: 'default_route.steps[0].connection_id' })]);
        // The capture and a refund of the payment made through it still go through it.
        const capture = await postLifecycle(t, payment.id, 'capture', {}, { transactionId: authorization });
        expect(capture.status, await capture.clone().text()).toBe(200);
        const captured = await getPayment(t, payment.id);
        expect(captured.status).toBe('SUCCEEDED');
        const captureTx = captured.transactions.find((x) => x.type === 'CAPTURE')!;
        expect(await through(captureTx.id)).toBe(mine.connection_id);
        const refund = await postLifecycle(t, payment.id, 'refund', { amount: { currency: 'BRL', value: 10 } }, { transactionId: captureTx.id });
        expect(refund.status, await refund.clone().text()).toBe(200);
        const refundTx = (await getPayment(t, payment.id)).transactions.find((x) => x.type === 'REFUND')!;
        expect(refundTx.status).toBe('SUCCEEDED');
        expect(await through(refundTx.id)).toBe(mine.connection_id);
      });
    });
  });
}
