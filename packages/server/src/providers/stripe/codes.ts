/**
 * Stripe's decline and error codes → our answer and the failover decision (docs/providers/stripe.md renders
 * this table; test/connector-stripe-units.test.ts checks every row against failoverDecision and the doc).
 *
 * Stripe reports a card decline as an error of type `card_error`: `code` says what kind (`card_declined`,
 * `incorrect_cvc`, `expired_card`, `processing_error`…) and, for `card_declined`, `decline_code` says why
 * the issuer declined (`insufficient_funds`, `do_not_honor`, `try_again_later`…). The adapter looks up
 * `decline_code` first, then `code` (codeOf below). Codes and meanings: https://docs.stripe.com/declines/codes
 * and https://docs.stripe.com/error-codes.
 *
 * Unknown codes: a decline whose code is not here is the `*` row, DECLINED / DO_NOT_HONOR (ISO 05), a hard
 * decline. A code we do not know cannot be shown to be temporary, and retrying a refused card at another
 * acquirer is what card schemes fine (excessive retries); a missed soft failover costs one payment, a wrong
 * retry programme costs the merchant. Stripe's own failures (`api_error`, HTTP 5xx) never reach this table:
 * they are BAD_RESPONSE (the adapter), which fails over anyway.
 */
import type { CodeMapping } from '../connector.js';

/** The row for a decline code that is not in the table. */
export const UNKNOWN_DECLINE = '*';

export const STRIPE_CODES: readonly CodeMapping[] = [
  // Issuer declines (card_declined + decline_code), hard: another acquirer reaches the same issuer.
  { providerCode: 'insufficient_funds', outcome: 'DECLINED', responseCode: 'INSUFFICIENT_FUNDS', iso8583ResponseCode: '51', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card has insufficient funds' },
  { providerCode: 'do_not_honor', outcome: 'DECLINED', responseCode: 'DO_NOT_HONOR', iso8583ResponseCode: '05', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The issuer declined the payment without a reason' },
  { providerCode: 'generic_decline', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '05', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The issuer declined the payment' },
  { providerCode: 'card_declined', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '05', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card was declined (no decline code given)' },
  { providerCode: 'call_issuer', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '01', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The issuer asks the cardholder to call it' },
  { providerCode: 'stolen_card', outcome: 'DECLINED', responseCode: 'REPORTED_STOLEN', iso8583ResponseCode: '43', merchantAdviceCode: '03', decision: 'HARD_DECLINE', message: 'The card was reported stolen' },
  { providerCode: 'lost_card', outcome: 'DECLINED', responseCode: 'REPORTED_STOLEN', iso8583ResponseCode: '41', merchantAdviceCode: '03', decision: 'HARD_DECLINE', message: 'The card was reported lost' },
  { providerCode: 'pickup_card', outcome: 'DECLINED', responseCode: 'REPORTED_STOLEN', iso8583ResponseCode: '04', merchantAdviceCode: '03', decision: 'HARD_DECLINE', message: 'The issuer asks for the card to be kept' },
  { providerCode: 'fraudulent', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '59', merchantAdviceCode: '03', decision: 'HARD_DECLINE', message: 'The payment was declined as suspected fraud' },
  { providerCode: 'merchant_blacklist', outcome: 'DECLINED', responseCode: 'DECLINED', iso8583ResponseCode: '05', merchantAdviceCode: '03', decision: 'HARD_DECLINE', message: "The card is on the merchant's block list at Stripe" },
  { providerCode: 'incorrect_cvc', outcome: 'DECLINED', responseCode: 'INVALID_SECURITY_CODE', iso8583ResponseCode: 'N7', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The security code is incorrect' },
  { providerCode: 'invalid_cvc', outcome: 'DECLINED', responseCode: 'INVALID_SECURITY_CODE', iso8583ResponseCode: 'N7', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The security code is invalid' },
  { providerCode: 'incorrect_number', outcome: 'DECLINED', responseCode: 'INVALID_CARD_DATA', iso8583ResponseCode: '14', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card number is incorrect' },
  { providerCode: 'invalid_number', outcome: 'DECLINED', responseCode: 'INVALID_CARD_DATA', iso8583ResponseCode: '14', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card number is invalid' },
  { providerCode: 'expired_card', outcome: 'DECLINED', responseCode: 'INVALID_CARD_DATA', iso8583ResponseCode: '54', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card has expired' },
  { providerCode: 'invalid_expiry_year', outcome: 'DECLINED', responseCode: 'INVALID_CARD_DATA', iso8583ResponseCode: '54', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The expiry year is invalid' },
  { providerCode: 'card_not_supported', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '57', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card does not support this kind of purchase' },
  { providerCode: 'transaction_not_allowed', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '57', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The issuer does not allow this transaction' },
  { providerCode: 'currency_not_supported', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '57', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card does not support the currency' },
  { providerCode: 'card_velocity_exceeded', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '61', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: "The card's spending limit was exceeded" },
  { providerCode: 'withdrawal_count_limit_exceeded', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '65', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: "The card's transaction count limit was exceeded" },
  { providerCode: 'authentication_required', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '1A', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The issuer requires cardholder authentication (3-D Secure)' },
  // Temporary: the issuer or the network could not decide now; another acquirer may get through.
  { providerCode: 'try_again_later', outcome: 'DECLINED', responseCode: 'DO_NOT_HONOR', iso8583ResponseCode: '05', merchantAdviceCode: '02', decision: 'SOFT_FAILURE', message: 'The issuer could not decide now; try again later' },
  { providerCode: 'issuer_not_available', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '91', merchantAdviceCode: null, decision: 'SOFT_FAILURE', message: 'The issuer could not be reached' },
  { providerCode: 'reenter_transaction', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '19', merchantAdviceCode: null, decision: 'SOFT_FAILURE', message: 'The issuer asks for the payment to be sent again' },
  { providerCode: 'approve_with_id', outcome: 'DECLINED', responseCode: 'DECLINED_BY_BANK', iso8583ResponseCode: '19', merchantAdviceCode: null, decision: 'SOFT_FAILURE', message: 'The issuer could not authorize the payment now' },
  // Stripe's side: it could not process the card now.
  { providerCode: 'processing_error', outcome: 'ERROR', responseCode: 'PROVIDER_ERROR', iso8583ResponseCode: '96', merchantAdviceCode: null, decision: 'SOFT_FAILURE', message: 'Stripe could not process the card' },
  { providerCode: 'rate_limit', outcome: 'ERROR', responseCode: 'PROVIDER_ERROR', iso8583ResponseCode: '96', merchantAdviceCode: null, decision: 'SOFT_FAILURE', message: 'Stripe refused the call: too many requests' },
  // Any other decline code (see above).
  { providerCode: UNKNOWN_DECLINE, outcome: 'DECLINED', responseCode: 'DO_NOT_HONOR', iso8583ResponseCode: '05', merchantAdviceCode: null, decision: 'HARD_DECLINE', message: 'The card was declined' },
];

const BY_CODE = new Map(STRIPE_CODES.map((row) => [row.providerCode, row]));

/** The row for a Stripe error's codes: `decline_code` first (the issuer's reason), then `code`, else the `*` row. */
export function codeRow(error: { decline_code?: string | null; code?: string | null }): CodeMapping {
  return (error.decline_code ? BY_CODE.get(error.decline_code) : undefined) ?? (error.code ? BY_CODE.get(error.code) : undefined) ?? BY_CODE.get(UNKNOWN_DECLINE)!;
}
