/**
 * Mercado Pago (MERCADO_PAGO): cards in Latin America, PIX and boleto in Brazil, through Mercado Pago's
 * Payments API.
 * docs/providers/mercado-pago.md says what it does, its credentials, webhooks and code table.
 */
import type { Connector } from '../connector.js';
import { MercadoPagoAdapter } from './adapter.js';
import { MERCADO_PAGO } from './client.js';
import { MERCADO_PAGO_CODES } from './codes.js';

export const mercadoPagoConnector: Connector = {
  id: MERCADO_PAGO,
  displayName: 'Mercado Pago',
  capabilities: {
    // Cards, and PIX and boleto (bolbradesco) in Brazil, in reais (adapter.ts startAsyncPayment).
    paymentMethods: ['CARD', 'PIX', 'BOLETO'],
    // Where Mercado Pago acquires cards in local currency: Argentina, Brazil, Mexico, Colombia, Chile, Peru, Uruguay.
    currencies: ['ARS', 'BRL', 'MXN', 'COP', 'CLP', 'PEN', 'UYU'],
    countries: ['AR', 'BR', 'MX', 'CO', 'CL', 'PE', 'UY'],
    features: {
      authorizeCapture: true,
      partialCapture: true,
      void: true,
      partialRefund: true,
      multipleRefunds: true,
      webhooks: true,
      disputeEvidence: true,
      additionalEvidence: true,
    },
  },
  codes: MERCADO_PAGO_CODES,
  credentialFields: ['access_token', 'webhook_secret'],
  create: (deps) => new MercadoPagoAdapter({ baseUrl: deps.baseUrl }),
};
