/**
 * Routings (Yuno's shape, docs/guides/routing.md): one per (account, payment method), a default route and
 * condition sets each with its own route. Steps are the failover order. planRoute is what a payment asks.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import { toIsoMicros } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import type { ProviderCatalogue } from '../providers/catalogue.js';
import { SANDBOX_A, SANDBOX_B, type ProviderRegistry } from '../providers/registry.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { matchingSet } from './conditions.js';
import type { ConnectionBox } from './connection-secrets.js';
import { addConnection, sandboxCredentials } from './connections.js';
import { ROUTABLE_PAYMENT_METHODS, type StoredConditionSet, type StoredRoute } from './model.js';
import type { PaymentFacts, RoutePlan, RouteStep } from './plan.js';
import { routingRepository as repo, type ConnectionRow, type RoutingRow } from './repository.js';
import { routingWarnings, validateConditionSets, validateRoute, type RouteTargets } from './validation.js';

/** The API's routing (spec: Routing), built from a stored row. */
export type RoutingView = Schemas['Routing'];

/** What routing reads of the providers: those this service runs, and what each can serve (GET /v1/providers). */
type Catalogue = Pick<ProviderCatalogue, 'get'>;

// Warnings are worked out on every read, against what the providers serve now.
const viewOf = (row: RoutingRow, catalogue: Catalogue): RoutingView => ({
  id: row.id,
  account_id: row.account_id,
  payment_method: row.payment_method,
  name: row.name,
  default_route: row.default_route,
  condition_sets: row.condition_sets,
  created_at: toIsoMicros(row.created_at),
  updated_at: toIsoMicros(row.updated_at),
  warnings: routingWarnings(row.condition_sets, catalogue),
});

// Stored in a stable form: steps and sets in order, whatever order the request listed them.
const normalRoute = (route: StoredRoute): StoredRoute => ({
  steps: [...route.steps].sort((a, b) => a.index - b.index).map((s) => ({ index: s.index, provider_id: s.provider_id, connection_id: s.connection_id })),
});
const normalSets = (sets: readonly StoredConditionSet[]): StoredConditionSet[] =>
  [...sets]
    .sort((a, b) => a.sort_number - b.sort_number)
    .map((s) => ({ sort_number: s.sort_number, name: s.name, conditions: s.conditions, route: normalRoute(s.route) }));

async function connectionsById(db: Queryable, organizationId: string): Promise<Map<string, ConnectionRow>> {
  return new Map((await repo.listConnections(db, organizationId)).map((c) => [c.id, c]));
}

function validate(input: { default_route?: StoredRoute; condition_sets?: StoredConditionSet[] }, targets: RouteTargets): FieldError[] {
  const errors: FieldError[] = [];
  if (input.default_route) validateRoute(input.default_route, 'default_route', targets, errors);
  if (input.condition_sets) validateConditionSets(input.condition_sets, targets, errors);
  return errors;
}

export interface RoutingInput {
  account_id: string;
  payment_method: string;
  name: string;
  default_route: StoredRoute;
  condition_sets?: StoredConditionSet[];
}

export type CreateResult =
  | { kind: 'created'; routing: RoutingView }
  | { kind: 'invalid'; errors: FieldError[] }
  | { kind: 'unknown_account' }
  | { kind: 'exists' };

/**
 * `providers`: the providers this service runs; a step naming another is refused, as one whose provider
 * does not serve the payment method (`catalogue`). Validated and stored under the organization's routes
 * lock, so a connection deleted meanwhile (connections.ts deleteConnection) is never stored in a route.
 */
export async function createRouting(db: Queryable, organizationId: string, input: RoutingInput, providers: ProviderRegistry, catalogue: Catalogue): Promise<CreateResult> {
  if (!(await accountBelongsTo(db, input.account_id, organizationId))) return { kind: 'unknown_account' };
  return db.transaction(async (tx) => {
    await repo.lockRoutes(tx, organizationId);
    const errors = validate(input, { connections: await connectionsById(tx, organizationId), providers, catalogue, paymentMethod: input.payment_method });
    if (errors.length > 0) return { kind: 'invalid', errors };
    return insertRouting(tx, organizationId, input, catalogue);
  });
}

async function insertRouting(db: Queryable, organizationId: string, input: RoutingInput, catalogue: Catalogue): Promise<CreateResult> {
  const row = await repo.insertRouting(db, {
    id: `r_${randomUUID()}`,
    organizationId,
    accountId: input.account_id,
    paymentMethod: input.payment_method,
    name: input.name,
    defaultRoute: normalRoute(input.default_route),
    conditionSets: normalSets(input.condition_sets ?? []),
  });
  return row ? { kind: 'created', routing: viewOf(row, catalogue) } : { kind: 'exists' };
}

export async function listRoutings(db: Queryable, organizationId: string, catalogue: Catalogue, accountId: string, paymentMethod?: string): Promise<RoutingView[] | undefined> {
  if (!(await accountBelongsTo(db, accountId, organizationId))) return undefined;
  return (await repo.listRoutings(db, organizationId, accountId, paymentMethod)).map((row) => viewOf(row, catalogue));
}

export async function getRouting(db: Queryable, organizationId: string, id: string, catalogue: Catalogue): Promise<RoutingView | undefined> {
  const row = await repo.findRouting(db, organizationId, id);
  return row && viewOf(row, catalogue);
}

export type UpdateResult = { kind: 'updated'; routing: RoutingView } | { kind: 'invalid'; errors: FieldError[] } | { kind: 'not_found' };

export async function updateRouting(
  db: Queryable,
  organizationId: string,
  id: string,
  patch: { name?: string; default_route?: StoredRoute; condition_sets?: StoredConditionSet[] },
  providers: ProviderRegistry,
  catalogue: Catalogue,
): Promise<UpdateResult> {
  return db.transaction(async (tx) => {
    await repo.lockRoutes(tx, organizationId);
    const current = await repo.findRouting(tx, organizationId, id);
    if (!current) return { kind: 'not_found' };
    const errors = validate(patch, { connections: await connectionsById(tx, organizationId), providers, catalogue, paymentMethod: current.payment_method });
    if (errors.length > 0) return { kind: 'invalid', errors };
    const row = await repo.updateRouting(tx, organizationId, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.default_route ? { defaultRoute: normalRoute(patch.default_route) } : {}),
      ...(patch.condition_sets ? { conditionSets: normalSets(patch.condition_sets) } : {}),
    });
    return row ? { kind: 'updated', routing: viewOf(row, catalogue) } : { kind: 'not_found' };
  });
}

/**
 * The route a payment follows: the organization's routing for (account, payment method), the first
 * condition set (by sort_number) whose every condition matches, else the default route; its steps in
 * order without disabled connections nor providers this service does not run (`providers`: a sandbox
 * one outside sandbox mode). null when no routing applies or no step is left.
 *
 * `isEnabled` says whether a step's connection is usable: the orchestrator's opened-connection cache
 * (routing/connections.ts openConnection, a few seconds, forgotten at once on a PATCH here), which it
 * reads again for the step it calls, so a payment does not list every connection of its organization.
 */
export async function planRoute(
  db: Queryable,
  organizationId: string,
  facts: PaymentFacts,
  providers: Pick<ProviderRegistry, 'get'>,
  isEnabled: (connectionId: string) => Promise<boolean>,
): Promise<RoutePlan | null> {
  const routing = await repo.findRoutingFor(db, organizationId, facts.accountId, facts.paymentMethod.toUpperCase());
  if (!routing) return null;
  const set = matchingSet(routing.condition_sets, facts);
  const route = set?.route ?? routing.default_route;
  const steps: RouteStep[] = [];
  // One after the other: on a transaction's connection statements queue anyway, and most answers are cached.
  for (const s of [...route.steps].sort((a, b) => a.index - b.index)) {
    if (providers.get(s.provider_id) && (await isEnabled(s.connection_id))) steps.push({ index: s.index, providerId: s.provider_id, connectionId: s.connection_id });
  }
  if (steps.length === 0) return null;
  return { routingId: routing.id, conditionSet: set ? { sortNumber: set.sort_number, name: set.name } : null, steps };
}

/** The payment's `routing_rules`: which routing and condition set applied (id 0 and "Default route" for the default). */
export function routingRulesOf(plan: RoutePlan): Schemas['PaymentRoutingRules'] {
  const providers = plan.steps.map((s) => s.providerId).join(' then ');
  const matched = plan.conditionSet ? `condition set ${plan.conditionSet.sortNumber} "${plan.conditionSet.name}" matched` : 'no condition set matched';
  const description = `Routing ${plan.routingId ?? '(none)'}: ${matched}; route ${providers}`;
  return {
    smart_routing: false,
    // Connection health (circuit breakers) always applies to the steps.
    monitors: true,
    condition: {
      id: plan.conditionSet?.sortNumber ?? 0,
      name: (plan.conditionSet?.name ?? 'Default route').slice(0, 255),
      description: description.length > 255 ? `${description.slice(0, 254)}…` : description,
    },
    routing_id: plan.routingId,
  };
}

/**
 * The routings every account starts with (sandbox mode): CARD, and each asynchronous method (PIX,
 * BANK_TRANSFER, OXXO, BOLETO, PAYPAL, MERCADO_PAGO_WALLET, CASH, APPLE_PAY, GOOGLE_PAY), through SANDBOX_A,
 * then SANDBOX_B. Nothing when the organization lacks either connection.
 *
 * `db` is the new account's (or organization's) transaction. The connections are read and the routings
 * stored under the organization's routes lock, like every routing write: otherwise a DELETE
 * /v1/connections/{id} (connections.ts deleteConnection) could check that no routing names the connection,
 * before these uncommitted routings are visible to it, and commit, leaving routings that name a deleted
 * connection.
 */
export async function addDefaultRouting(db: Queryable, organizationId: string, accountId: string): Promise<void> {
  await repo.lockRoutes(db, organizationId);
  const connections = await repo.listConnections(db, organizationId);
  const a = connections.find((c) => c.provider_id === SANDBOX_A);
  const b = connections.find((c) => c.provider_id === SANDBOX_B);
  if (!a || !b) return;
  for (const method of ROUTABLE_PAYMENT_METHODS) {
    await repo.insertRouting(db, {
      id: `r_${randomUUID()}`,
      organizationId,
      accountId,
      paymentMethod: method,
      name: `${method === 'CARD' ? 'Card' : method} — SANDBOX_A then SANDBOX_B`,
      defaultRoute: {
        steps: [
          { index: 1, provider_id: SANDBOX_A, connection_id: a.id },
          { index: 2, provider_id: SANDBOX_B, connection_id: b.id },
        ],
      },
      conditionSets: [],
    });
  }
}

/** What a new organization starts with in sandbox mode (only): a connection to each sandbox acquirer and the default CARD routing for each account. */
export async function addOrganizationDefaults(db: Queryable, box: ConnectionBox, organizationId: string): Promise<void> {
  for (const providerId of [SANDBOX_A, SANDBOX_B]) {
    await addConnection(db, box, organizationId, { providerId, name: `${providerId} sandbox`, credentials: sandboxCredentials(providerId) });
  }
  for (const accountId of await repo.accountsOf(db, organizationId)) await addDefaultRouting(db, organizationId, accountId);
}
