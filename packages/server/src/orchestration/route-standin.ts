/**
 * TEMPORARY (until routing lands on main): SANDBOX_A then SANDBOX_B through per-provider default
 * connections, both served by the one sandbox provider. Deleted when main's routing is merged.
 */
import { SANDBOX_A_DEFAULT_CREDENTIALS } from '../providers/sandbox/sandbox-a-provider.js';
import { SANDBOX_B_DEFAULT_CREDENTIALS } from '../providers/sandbox/sandbox-b-provider.js';
import { SANDBOX_A, SANDBOX_B } from '../providers/registry.js';
import type { RoutingPort } from './orchestrator.js';

export function standInRouting(timeoutMs: number): RoutingPort {
  const connection = (providerId: string) => ({
    connectionId: `${providerId.toLowerCase()}-default`,
    providerId,
    name: `${providerId} sandbox`,
    enabled: true,
    context: { connectionId: `${providerId.toLowerCase()}-default`, credentials: providerId === SANDBOX_A ? SANDBOX_A_DEFAULT_CREDENTIALS : SANDBOX_B_DEFAULT_CREDENTIALS, timeoutMs },
  });
  return {
    async planRoute() {
      return {
        routingId: null,
        conditionSet: null,
        steps: [
          { index: 1, providerId: SANDBOX_A, connectionId: 'sandbox_a-default' },
          { index: 2, providerId: SANDBOX_B, connectionId: 'sandbox_b-default' },
        ],
      };
    },
    async openConnection(_db, _org, connectionId) {
      return connectionId.startsWith('sandbox_a') ? connection(SANDBOX_A) : connection(SANDBOX_B);
    },
    routingRulesOf() {
      return { smart_routing: false, monitors: true, condition: { id: 0, name: 'Default route', description: null } };
    },
  };
}

