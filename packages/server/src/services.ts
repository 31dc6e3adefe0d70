/**
 * Builds the long-lived services handlers use (AppServices in context.ts). A domain that needs its own
 * adds them in its services.ts (declaration-merging its members into AppServices) and is called here.
 */
import type { AppServices } from './context.js';
import type { Database } from './db/database.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { routingPort } from './orchestration/routing-port.js';
import { buildOrchestrationServices } from './orchestration/services.js';
import { paymentRecoverer } from './payments/created-reply.js';
import { followUpRecoverer, settleFollowUp } from './payments/lifecycle.js';
import { enrollmentRecoverer } from './vault/service.js';
import { linkBase } from './platform/config.js';
import { buildPaymentServices } from './payments/services.js';
import { PrometheusMetrics } from './platform/prometheus.js';
import { providerSecretBox } from './providers/sandbox/notification-secret.js';
import { buildRetentionServices } from './retention/services.js';
import { buildSandboxAdapters } from './providers/sandbox/build.js';
import { providerRegistry, type ProviderRegistry } from './providers/registry.js';
import { buildRoutingServices } from './routing/services.js';
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

declare module './context.js' {
  interface AppServices {
    /** Every provider adapter by id (SANDBOX_A, SANDBOX_B): what routing steps and connections name. */
    providers: ProviderRegistry;
  }
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
  // Both sandbox acquirers run as HTTP services (in this process unless SANDBOX_A_URL/SANDBOX_B_URL say
  // where): every provider call crosses a real socket. Registered before the workers, so on close they
  // stop after them (close hooks run in reverse).
  const sandbox = await buildSandboxAdapters(deps.config, { db: deps.db, secrets: providerSecretBox(resolved.keyring), onClose: deps.onClose });
  // `provider` is SANDBOX_A until payments go through routing (the orchestrator picks from `providers`).
  const providers = providerRegistry([sandbox.a, sandbox.b]);
  const provider = providers.get(sandbox.a.id)!;
  const routing = await buildRoutingServices(deps, resolved.keyring);
  return {
    metrics,
    provider,
    providers,
    idempotencyRecoverers: {
      payment: paymentRecoverer,
      transaction: followUpRecoverer,
      payment_method: enrollmentRecoverer(() => linkBase(deps.config)),
    },
    ...buildTenancyServices(deps),
    ...vault,
    ...(await buildPaymentServices(deps, provider)),
    ...(await buildWebhookServices(deps, resolved.keyring)),
    ...buildRetentionServices(deps),
    ...routing,
    ...buildOrchestrationServices(deps, { providers, routing: routingPort(routing.connectionBox), metrics, settleFollowUp }),
  };
}
