/**
 * The providers this service can reach, by the id routing steps and connections name (SANDBOX_A,
 * SANDBOX_B). Built once in services.ts; domain code asks it for the adapter of a step's provider.
 */
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

export function providerRegistry(providers: readonly PaymentProvider[]): ProviderRegistry {
  const byId = new Map(providers.map((p) => [p.id, p]));
  const ids = providers.map((p) => p.id);
  return { get: (id) => byId.get(id), ids: () => ids };
}
