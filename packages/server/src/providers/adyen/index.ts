/**
 * The Adyen connector (docs/providers/adyen.md): cards, PIX, boleto and OXXO through Adyen's Checkout API v72, dispute
 * evidence through its Disputes API v30, standard notifications verified by HMAC per item.
 */
import type { Connector } from '../connector.js';
import { ADYEN, AdyenAdapter } from './adapter.js';
import { ADYEN_CODES } from './codes.js';

export const adyenConnector: Connector = {
  id: ADYEN,
  displayName: 'Adyen',
  capabilities: {
    // Cards, and the asynchronous methods the adapter issues (startAsyncPayment: /payments with a PIX code, a
    // boleto or an OXXO voucher as Adyen's action; PIX and boleto in BRL, OXXO in MXN).
    paymentMethods: ['CARD', 'PIX', 'BOLETO', 'OXXO'],
    // Adyen settles in most ISO 4217 currencies and acquires worldwide; what a merchant account may use is
    // set up with Adyen, not knowable here.
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
  codes: ADYEN_CODES,
  credentialFields: ['api_key', 'merchant_account', 'hmac_key', 'live_url_prefix'],
  create: (deps) => new AdyenAdapter(deps),
};
