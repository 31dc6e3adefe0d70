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
import { followUpRecoverer, settleFollowUpByReconciliation } from './payments/lifecycle.js';
import { paymentPort } from './payments/orchestration-port.js';
import { enrollmentRecoverer } from './vault/service.js';
import { customerPaymentMethods } from './vault/customer-deletion.js';
import { linkBase } from './platform/config.js';
import { buildPaymentServices } from './payments/services.js';
import { openConnection } from './routing/connections.js';
import { PrometheusMetrics } from './platform/prometheus.js';
import { providerSecretBox } from './providers/sandbox/notification-secret.js';
import { buildRetentionServices } from './retention/services.js';
import { buildAsyncMethodServices } from './payments/async-methods/services.js';
import { buildSandboxAdapters } from './providers/sandbox/build.js';
import { SANDBOX_PROVIDERS } from './providers/sandbox/capabilities.js';
import { providerCatalogue, type ProviderCatalogue } from './providers/catalogue.js';
import { CONNECTORS } from './providers/connectors.js';
import { providerRegistry, SANDBOX_A, type ProviderRegistry } from './providers/registry.js';
import { FAILOVER_REASONS } from './orchestration/failover.js';
import { buildRoutingServices } from './routing/services.js';
import { buildCheckoutServices } from './checkout/services.js';
import { onPaymentApproved } from './checkout/link-state.js';
import { claimToken } from './checkout/tokens.js';
import { setApprovalHook } from './orchestration/approval-hook.js';
import { buildTenancyServices } from './tenancy/services.js';
import { resolveKeyring } from './keyring/keyring.js';
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
    /**
     * Every provider adapter this service runs, by id: what routing steps and connections may name. The
     * sandbox ones (SANDBOX_A, SANDBOX_B) in sandbox mode only; outside it none of them, so nothing
     * downstream (routing, payments, follow-ups, reconciliation, the vault) can reach a sandbox provider.
     */
    providers: ProviderRegistry;
    /** What each of `providers` can serve (GET /v1/providers; routing checks steps and conditions against it). */
    providerCatalogue: ProviderCatalogue;
  }
}

export async function buildServices(deps: ServiceDeps): Promise<AppServices> {
  // An approval through a payment link is recorded by the link (checkout), which orchestration cannot import.
  setApprovalHook(onPaymentApproved);
  // One keyring for every sealed value (read or created once). The vault registers and checks it first:
  // nothing is sealed under a key it would refuse.
  const resolved = await resolveKeyring(deps.config);
  const vault = await buildVaultServices(deps, resolved);
  const metrics = new PrometheusMetrics({
    webhookQueue: () => webhooksRepository.queueStats(deps.db),
    onCollectError: (err) => deps.log.warn({ err }, 'metrics: the webhook queue could not be read'),
    failoverReasons: FAILOVER_REASONS,
    ...(deps.db.counters ? { database: deps.db.counters } : {}),
  });
  // In sandbox mode both sandbox acquirers run as HTTP services (in this process unless
  // SANDBOX_A_URL/SANDBOX_B_URL say where): every provider call crosses a real socket. Registered before
  // the workers, so on close they stop after them (close hooks run in reverse). Outside sandbox mode they
  // do not exist: no acquirer starts, no adapter is registered.
  const sandbox = deps.config.sandbox
    ? await buildSandboxAdapters(deps.config, { db: deps.db, secrets: providerSecretBox(resolved.keyring), onClose: deps.onClose })
    : undefined;
  if (!sandbox && (deps.config.sandboxAUrl || deps.config.sandboxBUrl)) deps.log.warn('SANDBOX_A_URL / SANDBOX_B_URL ignored: the sandbox providers exist in sandbox mode only');
  // Real providers exist in every mode: a connection to one is what makes payorch reach money.
  const connectors = CONNECTORS.map((c) => c.create({ config: deps.config, log: deps.log, baseUrl: deps.config.providerApiUrls[c.id] }));
  const providers = providerRegistry([...(sandbox ? [sandbox.a, sandbox.b] : []), ...connectors]);
  // `provider` is SANDBOX_A for what is not routed yet (the orchestrator picks from `providers`); taken
  // from the registry, so it is normalized like every provider (providers/normalized-provider.ts).
  const provider = providers.get(SANDBOX_A);
  const catalogue = providerCatalogue(providers, [...(sandbox ? SANDBOX_PROVIDERS : []), ...CONNECTORS]);
  const routing = await buildRoutingServices(deps, resolved.keyring, providers);
  return {
    metrics,
    provider,
    providers,
    providerCatalogue: catalogue,
    idempotencyRecoverers: {
      payment: paymentRecoverer,
      transaction: followUpRecoverer,
      payment_method: enrollmentRecoverer(() => linkBase(deps.config)),
    },
    ...buildTenancyServices(deps),
    ...vault,
    customerPaymentMethods,
    ...(await buildPaymentServices(deps, provider, {
      providers,
      openConnection: (db, organizationId, connectionId) => openConnection(db, routing.connectionBox, organizationId, connectionId),
    })),
    ...(await buildWebhookServices(deps, resolved.keyring)),
    ...buildRetentionServices(deps),
    ...buildAsyncMethodServices(deps),
    ...buildCheckoutServices(resolved.keyring),
    oneTimeTokens: { claim: claimToken },
    ...routing,
    ...buildOrchestrationServices(deps, { providers, routing: routingPort(routing.connectionBox, providers), payments: paymentPort, metrics, settleFollowUp: settleFollowUpByReconciliation }),
  };
}
