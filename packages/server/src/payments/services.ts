import type { PaymentProvider } from '../providers/provider.js';
import type { ServiceDeps } from '../services.js';

/** Long-lived services of payments (workers…). Add members to AppServices by declaration merging. */
export async function buildPaymentServices(_deps: ServiceDeps, _provider: PaymentProvider): Promise<object> {
  return {};
}
