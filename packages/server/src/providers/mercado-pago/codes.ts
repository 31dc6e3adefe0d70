/**
 * Mercado Pago's code table: what a rejected payment's `status_detail` (and the few error answers that are
 * results, not outages) means for us and for failover. Mercado Pago answers no ISO 8583 code of its own:
 * the ISO column is the nearest equivalent of what its documentation says the detail means, chosen so that
 * failoverDecision (orchestration/failover.ts) reaches the decision written in the row; the connector's
 * test checks every row that way, and docs/providers/mercado-pago.md renders the table (checked too).
 *
 * Almost every rejection is the issuer's or Mercado Pago's antifraud's word on this card: another acquirer
 * would hear the same, and retrying it elsewhere is what card schemes fine (excessive retries). The one
 * soft decline is `cc_rejected_card_error` (the card could not be processed: not a refusal).
 */
import type { CodeMapping } from '../connector.js';

const hard = (providerCode: string, responseCode: string, iso: string, advice: string | null, message: string): CodeMapping => ({
  providerCode,
  outcome: 'DECLINED',
  responseCode,
  iso8583ResponseCode: iso,
  merchantAdviceCode: advice,
  decision: 'HARD_DECLINE',
  message,
});

export const MERCADO_PAGO_CODES: readonly CodeMapping[] = [
  hard('cc_rejected_insufficient_amount', 'INSUFFICIENT_FUNDS', '51', null, 'The card has insufficient funds'),
  hard('cc_rejected_bad_filled_security_code', 'INVALID_SECURITY_CODE', 'N7', null, 'The security code is wrong'),
  hard('cc_rejected_bad_filled_card_number', 'INVALID_CARD_DATA', '14', null, 'The card number is wrong'),
  hard('cc_rejected_bad_filled_date', 'INVALID_CARD_DATA', '54', null, 'The expiration date is wrong'),
  hard('cc_rejected_bad_filled_other', 'INVALID_CARD_DATA', '30', null, 'Some card data is wrong'),
  hard('cc_rejected_call_for_authorize', 'DECLINED_BY_BANK', '01', null, 'The payer must authorize the payment with the issuer'),
  hard('cc_rejected_card_disabled', 'DECLINED_BY_BANK', '62', null, 'The card is not active: the payer must activate it with the issuer'),
  hard('cc_rejected_high_risk', 'DO_NOT_HONOR', '59', '03', 'Refused by fraud prevention'),
  hard('cc_rejected_blacklist', 'DO_NOT_HONOR', '62', '03', 'The card is blocked (on a block list)'),
  hard('cc_rejected_duplicated_payment', 'DECLINED', '94', null, 'A payment of the same amount with this card was just made'),
  hard('cc_rejected_max_attempts', 'DECLINED', '75', '03', 'Too many attempts with this card'),
  hard('cc_rejected_invalid_installments', 'DECLINED', '12', null, 'The card does not accept this number of installments'),
  hard('cc_rejected_card_type_not_allowed', 'DECLINED', '57', null, 'This card type is not accepted for this payment'),
  hard('cc_rejected_by_bank', 'DECLINED_BY_BANK', '05', null, 'The issuer refused the payment'),
  hard('cc_rejected_other_reason', 'DO_NOT_HONOR', '05', null, 'The issuer refused the payment'),
  {
    providerCode: 'cc_rejected_card_error',
    outcome: 'DECLINED',
    responseCode: 'DECLINED',
    iso8583ResponseCode: '96',
    merchantAdviceCode: null,
    decision: 'SOFT_FAILURE',
    message: 'The card could not be processed',
  },
  // Error answers (HTTP 4xx with Mercado Pago's error body, keyed by its `error` field): the request, not the card.
  {
    providerCode: 'unauthorized',
    outcome: 'ERROR',
    responseCode: 'PROVIDER_AUTHENTICATION_FAILED',
    iso8583ResponseCode: '96',
    merchantAdviceCode: null,
    decision: 'SOFT_FAILURE',
    message: 'Mercado Pago refused the connection access token',
  },
  {
    providerCode: 'bad_request',
    outcome: 'ERROR',
    responseCode: 'PROVIDER_REQUEST_REJECTED',
    iso8583ResponseCode: '96',
    merchantAdviceCode: null,
    decision: 'SOFT_FAILURE',
    message: 'Mercado Pago rejected the request',
  },
];

/**
 * An unknown `status_detail` of a rejected payment: a refusal we cannot name, so a hard "do not honor" (the
 * safe side: retrying a refused card elsewhere is what schemes fine; a soft default would retry every new
 * code Mercado Pago adds).
 */
export const UNKNOWN_REJECTION: CodeMapping = hard('(unknown rejection)', 'DO_NOT_HONOR', '05', null, 'Mercado Pago rejected the payment');

/** An unknown error answer: a processing error (soft): nothing was charged, another provider may serve it. */
export const UNKNOWN_ERROR: CodeMapping = {
  providerCode: '(unknown error)',
  outcome: 'ERROR',
  responseCode: 'PROVIDER_ERROR',
  iso8583ResponseCode: '96',
  merchantAdviceCode: null,
  decision: 'SOFT_FAILURE',
  message: 'Mercado Pago could not process the request',
};

const BY_CODE = new Map(MERCADO_PAGO_CODES.map((c) => [c.providerCode, c]));

/** The row of a rejected payment's status_detail (the unknown-rejection row for a detail not in the table). */
export function rejectionRow(statusDetail: string | undefined): CodeMapping {
  const row = statusDetail === undefined ? undefined : BY_CODE.get(statusDetail);
  return row && row.outcome === 'DECLINED' ? row : UNKNOWN_REJECTION;
}

/** The row of an error answer's `error` field (the unknown-error row otherwise). */
export function errorRow(error: string | undefined): CodeMapping {
  const row = error === undefined ? undefined : BY_CODE.get(error);
  return row && row.outcome === 'ERROR' ? row : UNKNOWN_ERROR;
}
