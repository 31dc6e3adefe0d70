/**
 * Connector tests' setup: a connection to a real provider (pointed at its local double through the
 * service's *_API_URL) and the sandbox account's CARD routing sent through it. Connections are added with
 * the service's own sealing (routing/connections.ts), as POST /v1/connections does.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { afterAll, beforeAll, expect } from 'vitest';
import { addConnection } from '../../src/routing/connections.js';
import { ADYEN_TEST_CREDENTIALS, startAdyenDouble, type AdyenDouble } from '../doubles/adyen/server.js';
import { useServer, type Backend, type TestServer } from './harness.js';

const json = { 'content-type': 'application/json' };

/** Adds a connection of the sandbox organization; returns its id. Its secrets are remembered for the teardown scan. */
export async function connectProvider(
  t: TestServer,
  input: { providerId: string; credentials: Record<string, string>; name?: string; timeoutMs?: number },
): Promise<string> {
  for (const [field, value] of Object.entries(input.credentials)) t.rememberSecret(value, `${input.providerId} ${field}`);
  const { id } = await addConnection(t.db, t.running.deps.services.connectionBox, t.sandbox.organization_id, {
    providerId: input.providerId,
    name: input.name ?? `${input.providerId} test`,
    credentials: input.credentials,
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
  });
  return id;
}

/** Sends the sandbox account's card payments through these steps, in order (PATCH of its CARD routing). */
export function routeCards(t: TestServer, steps: { provider_id: string; connection_id: string }[]): Promise<void> {
  return routeMethod(t, 'CARD', steps);
}

/** Sends the sandbox account's payments of `method` (CARD, PIX, OXXO, …) through these steps, in order (its routing for the method). */
export async function routeMethod(t: TestServer, method: string, steps: { provider_id: string; connection_id: string }[]): Promise<void> {
  const res = await routingRequest(t, method, steps);
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

/** The PATCH (or POST, when the account has none for the method) of the method's routing, answered as it comes. */
export async function routingRequest(t: TestServer, method: string, steps: { provider_id: string; connection_id: string }[]): Promise<Response> {
  const list = await t.fetch(`/routing?account_id=${t.sandbox.account_id}&payment_method=${method}`);
  expect(list.status).toBe(200);
  const [routing] = (await list.json()) as { id: string }[];
  const body = { default_route: { steps: steps.map((s, i) => ({ index: i + 1, ...s })) }, condition_sets: [] };
  return routing
    ? t.fetch(`/routing/${routing.id}`, { method: 'PATCH', headers: json, body: JSON.stringify(body) })
    : t.fetch('/routing', {
        method: 'POST',
        headers: { ...json, 'x-idempotency-key': randomUUID() },
        body: JSON.stringify({ account_id: t.sandbox.account_id, payment_method: method, name: method, ...body }),
      });
}

/** What useAdyenServer sets up, filled in by its beforeAll hooks. */
export interface AdyenSetup {
  double: AdyenDouble;
  /** The ADYEN connection (the given timeout) and the sandbox organization's own SANDBOX_A one. */
  adyenConnection: string;
  sandboxConnection: string;
}

/**
 * A test server whose ADYEN connector talks to a fresh Adyen double, with an ADYEN connection: reconciliation
 * runs when a test says so (runOnce), a circuit opened by a timeout closes again at once. Call inside a
 * describe; `setup` is filled in before the describe's own beforeAll hooks run.
 */
export function useAdyenServer(backend: Backend, timeoutMs: number): { t: TestServer; setup: AdyenSetup } {
  const setup = {} as AdyenSetup;
  const env: Record<string, string> = { RECONCILIATION_INTERVAL_MS: '3600000', CIRCUIT_COOL_DOWN_MS: '100' };
  beforeAll(async () => {
    setup.double = await startAdyenDouble(ADYEN_TEST_CREDENTIALS);
    env.ADYEN_API_URL = setup.double.url;
  });
  const t = useServer(backend, { env });
  afterAll(() => setup.double?.close());
  beforeAll(async () => {
    setup.adyenConnection = await connectProvider(t, { providerId: 'ADYEN', credentials: ADYEN_TEST_CREDENTIALS, timeoutMs });
    const list = (await (await t.fetch('/connections')).json()) as Schemas['ConnectionList'];
    setup.sandboxConnection = list.find((c) => c.provider_id === 'SANDBOX_A')!.connection_id;
  });
  return { t, setup };
}
