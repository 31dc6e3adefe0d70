/**
 * The STRIPE connector (docs/providers/stripe.md): cards, PIX, boleto and OXXO through PaymentIntents,
 * refunds, disputes with evidence, webhooks per connection. The adapter is adapter.ts; the code table codes.ts.
 */
import type { Connector } from '../connector.js';
import { StripeAdapter } from './adapter.js';
import { STRIPE } from './client.js';
import { STRIPE_CODES } from './codes.js';

export const stripeConnector: Connector = {
  id: STRIPE,
  displayName: 'Stripe',
  capabilities: {
    // Cards, and the asynchronous methods the adapter issues (startAsyncPayment: PaymentIntents with a PIX
    // code, a boleto or an OXXO voucher in next_action; PIX and boleto in BRL, OXXO in MXN).
    paymentMethods: ['CARD', 'PIX', 'BOLETO', 'OXXO'],
    // Stripe settles 135+ currencies; which ones depends on the merchant's Stripe account country.
    currencies: 'ANY',
    countries: 'ANY',
    features: {
      authorizeCapture: true,
      partialCapture: true,
      void: true,
      partialRefund: true,
      multipleRefunds: true,
      webhooks: true,
      disputeEvidence: true,
      additionalEvidence: false,
    },
  },
  codes: STRIPE_CODES,
  credentialFields: ['secret_key', 'webhook_secret'],
  create: (deps) => new StripeAdapter(deps),
};
