/**
 * What the code running for one API request knows about it without being handed it: the organization
 * (the database's per-organization bound, db/organization-gate.ts) and whether a provider has been called
 * (past that point money may have moved, so no answer may say "nothing happened": idempotency's deferred
 * mode, and the gate serves such work first). Carried through every await by a slot of the process's one
 * async context (context-slots.ts).
 */
import { contextSlot } from './context-slots.js';

export interface RequestScope {
  /** The authenticated merchant's organization; null for requests of no organization (admin, probes). */
  readonly organizationId: string | null;
  /** Set by the provider adapters (providers/call-marking.ts) before any call that may act. */
  providerCalled: boolean;
}

const storage = contextSlot<RequestScope>('request scope');

/** Runs `fn` as the request of `organizationId`. */
export function inRequestScope<T>(organizationId: string | null, fn: () => T): T {
  return storage.run({ organizationId, providerCalled: false }, fn);
}

export function currentRequestScope(): RequestScope | undefined {
  return storage.get();
}

/**
 * Runs `fn` in a scope of its own (the caller's organization) and says whether it called a provider,
 * whether it returned or threw.
 */
export async function watchingProviderCalls<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T; providerCalled: boolean } | { ok: false; error: unknown; providerCalled: boolean }> {
  const parent = storage.get();
  const scope: RequestScope = { organizationId: parent?.organizationId ?? null, providerCalled: false };
  // The request goes on finishing (its reply is stored after this): a call here counts for it too.
  const done = () => {
    if (scope.providerCalled && parent) parent.providerCalled = true;
  };
  try {
    const value = await storage.run(scope, fn);
    done();
    return { ok: true, value, providerCalled: scope.providerCalled };
  } catch (error) {
    done();
    return { ok: false, error, providerCalled: scope.providerCalled };
  }
}

/** Called before a provider call that may act (charge, capture, void, refund, verify). */
export function noteProviderCall(): void {
  const scope = storage.get();
  if (scope) scope.providerCalled = true;
}
