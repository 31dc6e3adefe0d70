import type { Migration } from '../migrate.js';

// An account made before the asynchronous methods (issue 24) got only the sandbox's default CARD routing;
// a new account gets one routing per method the sandbox acquirers serve (routing/service.ts
// addDefaultRouting). So that an upgraded sandbox serves those methods too, every account whose CARD
// routing is still the sandbox default (SANDBOX_A then SANDBOX_B, no condition sets) gets the same route
// for each of them it has no routing for. An account whose merchant changed its CARD routing gets
// nothing: its routings are the merchant's to make. The list is the one of this release (a migration
// states the data at its point in time). Idempotent (ON CONFLICT DO NOTHING on account and method).
export default {
  version: '0028_sandbox_method_routings',
  sql: `
INSERT INTO routings (id, organization_id, account_id, payment_method, name, default_route, condition_sets)
SELECT 'r_' || gen_random_uuid()::text, card.organization_id, card.account_id, m.method, m.method || ' — SANDBOX_A then SANDBOX_B', card.default_route, '[]'::jsonb
FROM routings card
CROSS JOIN (VALUES ('PIX'), ('BANK_TRANSFER'), ('OXXO'), ('BOLETO'), ('PAYPAL'), ('MERCADO_PAGO_WALLET'), ('CASH'), ('APPLE_PAY'), ('GOOGLE_PAY')) AS m(method)
WHERE card.payment_method = 'CARD'
  AND card.condition_sets = '[]'::jsonb
  AND jsonb_path_query_array(card.default_route, '$.steps[*].provider_id') = '["SANDBOX_A", "SANDBOX_B"]'::jsonb
ON CONFLICT (account_id, payment_method) DO NOTHING;
`,
} satisfies Migration;
