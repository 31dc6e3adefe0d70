/**
 * What each provider this service runs can serve (GET /v1/providers, docs/providers/README.md), and what
 * routing checks its steps and conditions against. A connector describes itself (connector.ts); the
 * sandbox providers are described in sandbox/capabilities.ts in the same shape.
 */
import type { Connector, ProviderCapabilities } from './connector.js';
import type { ProviderRegistry } from './registry.js';

/** A provider's description: a Connector's own fields, so a connector is one as it is. */
export type ProviderDescription = Pick<Connector, 'id' | 'displayName' | 'capabilities' | 'credentialFields'>;

export interface ProviderCatalogue {
  /** Every provider this service runs that is described, in the registry's order. */
  list(): readonly ProviderDescription[];
  /** The description of a provider this service runs; undefined for one it does not run. */
  get(providerId: string): ProviderDescription | undefined;
}

/** Only the providers the registry runs are listed: a description alone (a sandbox one outside sandbox mode) is not. */
export function providerCatalogue(registry: Pick<ProviderRegistry, 'ids'>, descriptions: readonly ProviderDescription[]): ProviderCatalogue {
  const byId = new Map(descriptions.map((d) => [d.id, d]));
  const listed = registry.ids().flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  const running = new Map(listed.map((d) => [d.id, d]));
  return { list: () => listed, get: (id) => running.get(id) };
}

/** Whether a provider serves a value of a list capability ('ANY' serves every value). */
export function serves(list: ProviderCapabilities['currencies'], value: string): boolean {
  return list === 'ANY' || list.includes(value);
}
