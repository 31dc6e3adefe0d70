/**
 * The asynchronous payment methods (issue 24 item 4): the shopper completes them after the payment is
 * created, by the action it was shown — a PIX QR code, a bank transfer, a cash voucher (OXXO, boleto), a
 * redirect wallet's page. What differs per method is written once here; the flow is the same for all
 * (create.ts, settle.ts, expiry-worker.ts).
 */
import { ASYNC_METHOD_TYPES, type AsyncMethodType } from '../../providers/provider.js';

export interface AsyncMethod {
  /** The transaction's `category` (Yuno's: BANK_TRANSFER, TICKET, WALLET). */
  category: 'BANK_TRANSFER' | 'TICKET' | 'WALLET';
  /** Whether its money can be sent back through the provider: a PIX or a wallet can, cash handed over at a store cannot. */
  refundable: boolean;
  /**
   * A token wallet (GOOGLE_PAY): the provider authorizes the token at once, like a card; the payment ends
   * with its answer (SUCCEEDED or DECLINED), with no action for the shopper and no PENDING.
   */
  immediate?: true;
  /** The detail member the request may carry for this type (besides none). */
  detail?: 'bank_transfer' | 'wallet' | 'card';
}

export const ASYNC_METHODS: Readonly<Record<AsyncMethodType, AsyncMethod>> = {
  PIX: { category: 'BANK_TRANSFER', refundable: true, detail: 'bank_transfer' },
  BANK_TRANSFER: { category: 'BANK_TRANSFER', refundable: true, detail: 'bank_transfer' },
  OXXO: { category: 'TICKET', refundable: false },
  BOLETO: { category: 'TICKET', refundable: false },
  // Yuno's generic cash voucher: the acquirer issues the voucher of the payment's country.
  CASH: { category: 'TICKET', refundable: false },
  PAYPAL: { category: 'WALLET', refundable: true },
  MERCADO_PAGO_WALLET: { category: 'WALLET', refundable: true },
  // Apple Pay without a token (Yuno's "Wallet - Direct"): the shopper approves on the wallet's page.
  APPLE_PAY: { category: 'WALLET', refundable: true, detail: 'card' },
  GOOGLE_PAY: { category: 'WALLET', refundable: true, immediate: true, detail: 'wallet' },
};

export const isAsyncMethod = (type: unknown): type is AsyncMethodType => typeof type === 'string' && (ASYNC_METHOD_TYPES as readonly string[]).includes(type);

/** The payment's status while it waits for the shopper (the action is under payment_method.payment_method_detail). */
export const WAITING = { status: 'PENDING', subStatus: 'PENDING' } as const;

/** The attempt's status while the shopper has the action (Yuno shows such a transaction CREATED). */
export const ATTEMPT_WAITING = 'CREATED';

/** Whether a payment made with `type` may be refunded; any type not listed here (CARD) may. */
export function refundableMethod(type: string | undefined): boolean {
  return !isAsyncMethod(type) || ASYNC_METHODS[type].refundable;
}
