/**
 * The sandbox acquirers described as a connector describes itself (connector.ts ProviderCapabilities):
 * listed by GET /v1/providers in sandbox mode only. Both take any currency and country and do every
 * follow-up (see their servers in acquirer-a/ and acquirer-b/); notifications (chargebacks) arrive
 * signed, and dispute evidence is received (sandbox-provider.ts).
 */
import type { ProviderDescription } from '../catalogue.js';
import type { ProviderCapabilities } from '../connector.js';
import { SANDBOX_A, SANDBOX_B } from '../registry.js';

const SANDBOX_CAPABILITIES: ProviderCapabilities = {
  // Cards, the asynchronous methods both acquirers issue and the wallet token they authorize (acquirer/pending-payments.ts).
  paymentMethods: ['CARD', 'PIX', 'BANK_TRANSFER', 'OXXO', 'BOLETO', 'CASH', 'PAYPAL', 'MERCADO_PAGO_WALLET', 'APPLE_PAY', 'GOOGLE_PAY'],
  currencies: 'ANY',
  countries: 'ANY',
  features: { authorizeCapture: true, partialCapture: true, void: true, partialRefund: true, multipleRefunds: true, webhooks: true, disputeEvidence: true, additionalEvidence: true },
};

export const SANDBOX_PROVIDERS: readonly ProviderDescription[] = [
  { id: SANDBOX_A, displayName: 'Sandbox acquirer A', capabilities: SANDBOX_CAPABILITIES, credentialFields: ['api_key'] },
  { id: SANDBOX_B, displayName: 'Sandbox acquirer B', capabilities: SANDBOX_CAPABILITIES, credentialFields: ['merchant_account', 'password'] },
];
