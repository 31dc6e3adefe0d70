import type { Handlers } from '../context.js';
import { problem } from '../http/problems.js';
import { tenancyRepository } from './repository.js';
import { createAccount, createOrganization, issueApiKey } from './service.js';

const orgNotFound = (id: string) => problem('ORGANIZATION_NOT_FOUND', `No organization ${id}.`);

/** The operator API (docs/design.md §2); authenticate.ts has already checked admin-api-key. */
export const adminHandlers = {
  async createOrganization({ body }, ctx) {
    // The sandbox connections and routing in sandbox mode only: outside it no sandbox provider exists.
    const defaults = ctx.deps.config.sandbox ? { sandboxDefaults: ctx.deps.services.sandboxDefaults } : {};
    const created = await createOrganization(ctx.db, { name: body.name, pciCertified: body.pci_certified ?? false }, defaults);
    ctx.deps.services.credentials.forget(created.public_api_key); // works at once, even if tried (and cached as unknown) before
    ctx.log.info({ organizationId: created.organization_id }, 'organization created');
    return { status: 201, body: created };
  },

  async createAccount({ params, body }, ctx) {
    const defaultRouting = ctx.deps.config.sandbox && (body.default_routing ?? true) ? ctx.deps.services.sandboxDefaults : undefined;
    const account = await createAccount(ctx.db, params.organization_id, body.name, defaultRouting);
    return account ? { status: 201, body: account } : orgNotFound(params.organization_id);
  },

  async createApiKey({ params }, ctx) {
    const pair = await issueApiKey(ctx.db, params.organization_id);
    if (pair) ctx.deps.services.credentials.forget(pair.public_api_key);
    return pair ? { status: 201, body: pair } : orgNotFound(params.organization_id);
  },

  async revokeApiKey({ params }, ctx) {
    const revoked = await tenancyRepository.revokeApiKey(ctx.db, params.organization_id, params.public_api_key);
    if (!revoked) return problem('API_KEY_NOT_FOUND', `No active key ${params.public_api_key} in organization ${params.organization_id}.`);
    ctx.deps.services.credentials.forget(params.public_api_key);
    return { status: 204 };
  },
} satisfies Partial<Handlers>;
