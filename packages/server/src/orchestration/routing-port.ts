/** The orchestrator's view of routing (routing/service.ts, routing/connections.ts). */
import type { ConnectionBox } from '../routing/connection-secrets.js';
import { openConnection } from '../routing/connections.js';
import { planRoute, routingRulesOf } from '../routing/service.js';
import type { RoutingPort } from './orchestrator.js';

export function routingPort(box: ConnectionBox): RoutingPort {
  return {
    planRoute,
    openConnection: (db, organizationId, connectionId) => openConnection(db, box, organizationId, connectionId),
    routingRulesOf,
  };
}
