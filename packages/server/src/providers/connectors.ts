/**
 * Every real provider this service can reach, one line each (src/providers/<name>/). Adding a connector
 * touches its folder, this list, the spec's ConnectionCreateRequest variant and its <NAME>_API_URL setting
 * (the full list: docs/contributing/connectors.md).
 */
import { adyenConnector } from './adyen/index.js';
import type { Connector } from './connector.js';
import { mercadoPagoConnector } from './mercado-pago/index.js';
import { stripeConnector } from './stripe/index.js';

export const CONNECTORS: readonly Connector[] = [stripeConnector, adyenConnector, mercadoPagoConnector];
