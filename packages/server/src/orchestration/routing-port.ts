/** The orchestrator's view of routing (routing/service.ts, routing/connections.ts). */
import type { ProviderRegistry } from '../providers/registry.js';
import type { ConnectionBox } from '../routing/connection-secrets.js';
import { openConnection } from '../routing/connections.js';
import { planRoute, routingRulesOf } from '../routing/service.js';
import type { RoutingPort } from './orchestrator.js';

/** `providers`: what the service runs; a route's steps through any other provider are left out of its plan. */
export function routingPort(box: ConnectionBox, providers: ProviderRegistry): RoutingPort {
  return {
    planRoute: (db, organizationId, facts) =>
      planRoute(db, organizationId, facts, providers, async (connectionId) => (await openConnection(db, box, organizationId, connectionId))?.enabled === true),
    openConnection: (db, organizationId, connectionId) => openConnection(db, box, organizationId, connectionId),
    routingRulesOf,
  };
}
