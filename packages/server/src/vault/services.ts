import type { ServiceDeps } from '../services.js';

/** Long-lived services of the card vault (keys…). Add members to AppServices by declaration merging. */
export async function buildVaultServices(_deps: ServiceDeps): Promise<object> {
  return {};
}
