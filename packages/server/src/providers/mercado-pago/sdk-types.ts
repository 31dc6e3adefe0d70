/**
 * The `mercadopago` package's request and answer types the connector and its double are held to (one place
 * for the deep paths: the package's index exports its clients, not their types).
 */
export type { PaymentResponse } from 'mercadopago/dist/clients/payment/commonTypes.js';
export type { PaymentCreateRequest } from 'mercadopago/dist/clients/payment/create/types.js';
export type { PaymentSearch, PaymentSearchResult } from 'mercadopago/dist/clients/payment/search/types.js';
export type { CardTokenCreateBody } from 'mercadopago/dist/clients/cardToken/create/types.js';
export type { CardTokenResponse } from 'mercadopago/dist/clients/cardToken/commonTypes.js';
export type { RefundResponse } from 'mercadopago/dist/clients/paymentRefund/commonTypes.js';
export type { CreateRefundBody } from 'mercadopago/dist/clients/paymentRefund/create/types.js';
export type { ChargebackResponse } from 'mercadopago/dist/clients/chargeback/commonTypes.js';
