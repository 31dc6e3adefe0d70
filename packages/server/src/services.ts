/**
 * Builds the long-lived services handlers use (AppServices in context.ts). A domain that needs its own
 * adds them in its services.ts (declaration-merging its members into AppServices) and is called here.
 */
import type { AppServices } from './context.js';
import type { Database } from './db/database.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { buildPaymentServices } from './payments/services.js';
import { PrometheusMetrics } from './platform/prometheus.js';
import { providerSecretBox } from './providers/sandbox/notification-secret.js';
import { buildRetentionServices } from './retention/services.js';
import { SandboxProvider } from './providers/sandbox/sandbox-provider.js';
import { buildTenancyServices } from './tenancy/services.js';
import { resolveKeyring } from './vault/crypto/keyring.js';
import { buildVaultServices } from './vault/services.js';
import { webhooksRepository } from './webhooks/repository.js';
import { buildWebhookServices } from './webhooks/services.js';

declare module './context.js' {
  interface AppServices {
    /**
     * What operators see at GET /metrics (platform/prometheus.ts). Domain code records through its
     * OrchestrationMetrics methods (platform/metrics.ts); the HTTP layer records requests.
     */
    metrics: PrometheusMetrics;
  }
}

export interface ServiceDeps {
  db: Database;
  config: Config;
  log: Logger;
  /** Registers a hook the server awaits on close, before the database closes (workers stop here). */
  onClose?: (hook: () => Promise<void>) => void;
}

export async function buildServices(deps: ServiceDeps): Promise<AppServices> {
  // One keyring for every sealed value (read or created once). The vault registers and checks it first:
  // nothing is sealed under a key it would refuse.
  const resolved = await resolveKeyring(deps.config);
  const vault = await buildVaultServices(deps, resolved);
  const metrics = new PrometheusMetrics({
    webhookQueue: () => webhooksRepository.queueStats(deps.db),
    onCollectError: (err) => deps.log.warn({ err }, 'metrics: the webhook queue could not be read'),
  });
  const provider = new SandboxProvider({ db: deps.db, secrets: providerSecretBox(resolved.keyring), sandboxMode: deps.config.sandbox });
  return {
    metrics,
    provider,
    ...buildTenancyServices(deps),
    ...vault,
    ...(await buildPaymentServices(deps, provider)),
    ...(await buildWebhookServices(deps, resolved.keyring)),
    ...buildRetentionServices(deps),
  };
}
