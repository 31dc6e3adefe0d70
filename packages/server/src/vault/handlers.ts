import type { Handlers, RequestContext } from '../context.js';
import { UnsettledReply } from '../idempotency/idempotency.js';
import { enrollPaymentMethod, listPaymentMethods, type VaultContext } from './service.js';
import { pruneDeadRows } from './prune.js';
import { getPaymentMethod, unenrollPaymentMethod } from './unenroll.js';

/** What the vault's services need of a request (also createPayment's vault_on_success). */
export function vaultContext(ctx: RequestContext): VaultContext {
  return {
    db: ctx.db,
    vault: ctx.deps.services.vault,
    provider: ctx.deps.services.provider,
    organizationId: ctx.merchant.organizationId,
    pciCertified: ctx.merchant.pciCertified,
    baseUrl: ctx.baseUrl,
    log: ctx.log,
  };
}

export const vaultHandlers = {
  async enrollPaymentMethod({ params, headers, body }, ctx) {
    // Node lower-cases header names; the typed name is the spec's spelling.
    const key = (headers as Record<string, string | undefined>)['x-idempotency-key'] ?? headers['X-Idempotency-Key'] ?? null;
    // Bound here only: vault_on_success (createPayment) enrolls under the payment's own record.
    // The 201 reply is stored as the key's in the enrollment's own transaction (complete): see VaultContext.complete.
    const result = await enrollPaymentMethod(
      { ...vaultContext(ctx), bind: (tx, resource) => ctx.idempotency.bind(tx, resource), complete: async (tx, reply) => ctx.idempotency.complete?.(tx, reply) },
      params.customer_id,
      key,
      body,
    );
    // Unanswered verify: nothing was written, so the key is given back (UnsettledReply on an unbound claim).
    if (!result.ok && result.unanswered) throw new UnsettledReply(result.problem);
    if (!result.ok) return result.problem;
    return { status: 201, body: result.method };
  },

  async listPaymentMethods({ params, query }, ctx) {
    // Query values may arrive as strings; the validator has already checked their form.
    const page = {
      ...(query.limit !== undefined ? { limit: Number(query.limit) } : {}),
      ...(query.starting_after !== undefined ? { startingAfter: String(query.starting_after) } : {}),
    };
    const result = await listPaymentMethods(ctx.db, ctx.merchant.organizationId, params.customer_id, page, ctx.baseUrl);
    if (!result.ok) return result.problem;
    return { status: 200, body: result.list };
  },

  async getPaymentMethod({ params }, ctx) {
    const result = await getPaymentMethod(ctx.db, ctx.merchant.organizationId, params.customer_id, params.payment_method_id, ctx.baseUrl);
    return result.ok ? { status: 200, body: result.method } : result.problem;
  },

  async unenrollPaymentMethod({ params }, ctx) {
    const result = await unenrollPaymentMethod(ctx.db, ctx.merchant.organizationId, params.customer_id, params.payment_method_id, ctx.baseUrl);
    if (!result.ok) return result.problem;
    // The destroyed data key's dead row version still unwraps with the keyring until pruned: prune it now.
    ctx.afterCommit(() => pruneDeadRows(ctx.deps.db, ['payment_method_keys'], ctx.log));
    return { status: 200, body: result.method };
  },
} satisfies Partial<Handlers>;
