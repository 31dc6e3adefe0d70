/** Routing and connections over HTTP (docs/guides/routing.md): request shapes in, replies out. */
import type { Schemas } from '@payorch/types';
import type { Handlers } from '../context.js';
import { describeFieldErrors, problem, type FieldError } from '../http/problems.js';
import type { ProviderDescription } from '../providers/catalogue.js';
import { createConnection, deleteConnection, listConnections, updateConnection } from './connections.js';
import type { StoredConditionSet, StoredRoute } from './model.js';
import { createRouting, getRouting, listRoutings, updateRouting } from './service.js';

const routingNotFound = (id: string) => problem('ROUTING_NOT_FOUND', `No routing with id ${id}.`);
// Rules the schema cannot state (Yuno's code): 422, as this API answers business rules (docs/guides/errors.md).
const invalidRouting = (errors: FieldError[]) => problem('ROUTING_VALIDATION_FAILED', describeFieldErrors(errors), { errors });
const invalidAccount = (id: string) => problem('INVALID_ACCOUNT_ID', `Account ${id} is not one of this organization's accounts.`);

// The spec's condition object is one closed schema for every kind; validation.ts checks each kind's fields.
const asSets = (sets: unknown) => sets as StoredConditionSet[] | undefined;

const connectionNotFound = (id: string) => problem('CONNECTION_NOT_FOUND', `No connection with id ${id}.`);

/** GET /v1/providers's entry (spec: Provider) of a provider's description. */
const providerView = (p: ProviderDescription): Schemas['Provider'] => {
  const f = p.capabilities.features;
  return {
    provider_id: p.id,
    display_name: p.displayName,
    payment_methods: [...p.capabilities.paymentMethods],
    currencies: p.capabilities.currencies === 'ANY' ? 'ANY' : [...p.capabilities.currencies],
    countries: p.capabilities.countries === 'ANY' ? 'ANY' : [...p.capabilities.countries],
    features: {
      authorize_capture: f.authorizeCapture,
      partial_capture: f.partialCapture,
      void: f.void,
      partial_refund: f.partialRefund,
      multiple_refunds: f.multipleRefunds,
      webhooks: f.webhooks,
      dispute_evidence: f.disputeEvidence,
      additional_evidence: f.additionalEvidence,
    },
    credential_fields: [...p.credentialFields],
  };
};

export const routingHandlers = {
  async createRouting({ body }, ctx) {
    const result = await createRouting(ctx.db, ctx.merchant.organizationId, {
      account_id: body.account_id,
      payment_method: body.payment_method,
      name: body.name,
      default_route: body.default_route as StoredRoute,
      ...(body.condition_sets ? { condition_sets: asSets(body.condition_sets)! } : {}),
    }, ctx.deps.services.providers, ctx.deps.services.providerCatalogue);
    switch (result.kind) {
      case 'unknown_account':
        return invalidAccount(body.account_id);
      case 'invalid':
        return invalidRouting(result.errors);
      case 'exists':
        return problem(
          'ROUTING_ALREADY_EXISTS',
          `Account ${body.account_id} already has a ${body.payment_method} routing; change it with PATCH /v1/routing/{routing_id}.`,
        );
      case 'created':
        return { status: 201, body: result.routing };
    }
  },

  async listRoutings({ query }, ctx) {
    const list = await listRoutings(ctx.db, ctx.merchant.organizationId, ctx.deps.services.providerCatalogue, query.account_id, query.payment_method);
    return list ? { status: 200, body: list } : invalidAccount(query.account_id);
  },

  async getRouting({ params }, ctx) {
    const routing = await getRouting(ctx.db, ctx.merchant.organizationId, params.routing_id, ctx.deps.services.providerCatalogue);
    return routing ? { status: 200, body: routing } : routingNotFound(params.routing_id);
  },

  async updateRouting({ params, body }, ctx) {
    const result = await updateRouting(ctx.db, ctx.merchant.organizationId, params.routing_id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.default_route ? { default_route: body.default_route as StoredRoute } : {}),
      ...(body.condition_sets ? { condition_sets: asSets(body.condition_sets)! } : {}),
    }, ctx.deps.services.providers, ctx.deps.services.providerCatalogue);
    switch (result.kind) {
      case 'not_found':
        return routingNotFound(params.routing_id);
      case 'invalid':
        return invalidRouting(result.errors);
      case 'updated':
        return { status: 200, body: result.routing };
    }
  },

  async listConnections(_request, ctx) {
    return { status: 200, body: await listConnections(ctx.db, ctx.merchant.organizationId) };
  },

  async createConnection({ body }, ctx) {
    const { connectionBox, providerCatalogue } = ctx.deps.services;
    const result = await createConnection(ctx.db, connectionBox, ctx.merchant.organizationId, body, providerCatalogue);
    switch (result.kind) {
      case 'provider_not_available':
        return problem(
          'PROVIDER_NOT_AVAILABLE',
          `${result.providerId} is not a provider this service runs (GET /v1/providers lists them; the sandbox providers exist in sandbox mode only); nothing was stored.`,
          { errors: [{ path: '/body/provider_id', message: `${result.providerId} is not available in this service` }] },
        );
      case 'invalid':
        return problem('CONNECTION_VALIDATION_FAILED', describeFieldErrors(result.errors), { errors: result.errors });
      case 'limit_reached':
        return problem(
          'CONNECTION_LIMIT_REACHED',
          `An organization has at most ${result.max} connections (deleted ones do not count); delete one no routing uses (DELETE /v1/connections/{connection_id}) first. Nothing was stored.`,
        );
      case 'created':
        return { status: 201, body: result.connection };
    }
  },

  async deleteConnection({ params }, ctx) {
    const result = await deleteConnection(ctx.db, ctx.merchant.organizationId, params.connection_id);
    switch (result.kind) {
      case 'not_found':
        return connectionNotFound(params.connection_id);
      case 'in_use': {
        const named = result.routings.length === 1 ? `routing ${result.routings[0]}` : `routings ${result.routings.join(', ')}`;
        return problem(
          'CONNECTION_IN_USE',
          `Connection ${params.connection_id} is a step of ${named}: remove it from their routes (PATCH /v1/routing/{routing_id}) first.`,
        );
      }
      case 'deleted':
        return { status: 204 };
    }
  },

  async listProviders(_request, ctx) {
    return { status: 200, body: ctx.deps.services.providerCatalogue.list().map(providerView) };
  },

  async updateConnection({ params, body }, ctx) {
    const result = await updateConnection(ctx.db, ctx.merchant.organizationId, params.connection_id, body, ctx.deps.services.providers);
    switch (result.kind) {
      case 'not_found':
        return connectionNotFound(params.connection_id);
      case 'provider_not_available':
        return problem(
          'PROVIDER_NOT_AVAILABLE',
          `Connection ${params.connection_id} is to ${result.providerId}, which this service does not run (the sandbox providers exist in sandbox mode only); it stays disabled.`,
          { errors: [{ path: '/body/enabled', message: `cannot be true: ${result.providerId} is not available in this service` }] },
        );
      case 'updated':
        return { status: 200, body: result.connection };
    }
  },
} satisfies Partial<Handlers>;
