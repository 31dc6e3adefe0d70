/**
 * The providers this service can reach, by the id routing steps and connections name (SANDBOX_A,
 * SANDBOX_B). Built once in services.ts; domain code asks it for the adapter of a step's provider.
 */
import { normalizedProvider } from './normalized-provider.js';
import { markingCalls } from './call-marking.js';
import type { PaymentProvider } from './provider.js';

/** The two sandbox acquirers (docs/guides/routing.md): A behaves as the test-card table says, B is a second acquirer. */
export const SANDBOX_A = 'SANDBOX_A';
export const SANDBOX_B = 'SANDBOX_B';

export interface ProviderRegistry {
  /** The adapter for a provider id, or undefined for a provider this service does not know. */
  get(providerId: string): PaymentProvider | undefined;
  /** Every provider id known, in a stable order. */
  ids(): readonly string[];
}

/**
 * Provider ids older rows carry, and the provider that now answers for them. Before the remote acquirers (issue 16),
 * the in-process sandbox recorded its transactions as SANDBOX; SANDBOX_A is its successor (same test cards),
 * so a follow-up of such a transaction gets a provider's answer (it does not know the transaction: a 422),
 * never a 500 for a provider nobody can reach.
 */
export const LEGACY_PROVIDER_IDS: Readonly<Record<string, string>> = { SANDBOX: SANDBOX_A };

/**
 * Every adapter is handed out wrapped: whatever a provider answers is normalized at this one boundary
 * (normalizedProvider: lengths, characters, known codes, a bounded redacted raw answer) before any caller
 * sees it, and its acting calls are noted for the request (markingCalls, call-marking.ts).
 */
export function providerRegistry(adapters: readonly PaymentProvider[], aliases: Readonly<Record<string, string>> = LEGACY_PROVIDER_IDS): ProviderRegistry {
  const providers = adapters.map((a) => markingCalls(normalizedProvider(a)));
  const byId = new Map(providers.map((p) => [p.id, p]));
  for (const [legacy, current] of Object.entries(aliases)) {
    const provider = byId.get(current);
    if (provider && !byId.has(legacy)) byId.set(legacy, provider);
  }
  const ids = providers.map((p) => p.id);
  return { get: (id) => byId.get(id), ids: () => ids };
}
