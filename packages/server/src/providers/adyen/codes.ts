/**
 * Adyen's code table: the Checkout API's `refusalReasonCode` (Adyen's own mapping of what the issuer or its
 * risk checks answered, published as "Refusal reasons") → our response code, the ISO 8583 field 39 code that
 * carries the same meaning, and the decision failover.ts reaches for it. Codes for point-of-sale only
 * situations (PIN entry, contactless fallback, chip downgrade) are left to the fallback rows: this connector
 * sends card-not-present payments.
 *
 * A row keyed `<code> + MAC <nn>` applies when Adyen also reports Mastercard's merchant advice code
 * (`additionalData.merchantAdviceCode`, "02: Cannot approve at this time…"): the advice changes the decision
 * (02 try later → soft; 03 / 21 never retry → hard). For a combination without its own row the code's row
 * is used with the advice as sent, and failoverDecision decides on both.
 *
 * Fallbacks (the last two rows): a refusal code this table does not know is a hard DO_NOT_HONOR (a decline we
 * cannot read must not be retried at another acquirer: retrying declines is what schemes fine); a resultCode
 * `Error` without a known code is a soft PROVIDER_ERROR (Adyen could not process it; another acquirer may).
 */
import type { CodeMapping } from '../connector.js';

/** The fallback row for a refusal (resultCode Refused / Cancelled) whose code is not in the table. */
export const UNKNOWN_REFUSAL = 'unknown refusal';
/** The fallback row for resultCode Error whose code is not in the table. */
export const UNKNOWN_ERROR = 'unknown error';

const declined = (
  providerCode: string,
  responseCode: string,
  iso8583ResponseCode: string,
  decision: CodeMapping['decision'],
  message: string,
  merchantAdviceCode: string | null = null,
): CodeMapping => ({ providerCode, outcome: 'DECLINED', responseCode, iso8583ResponseCode, merchantAdviceCode, decision, message });

const error = (providerCode: string, iso8583ResponseCode: string, message: string): CodeMapping => ({
  providerCode,
  outcome: 'ERROR',
  responseCode: 'PROVIDER_ERROR',
  iso8583ResponseCode,
  merchantAdviceCode: null,
  decision: 'SOFT_FAILURE',
  message,
});

export const ADYEN_CODES: readonly CodeMapping[] = [
  declined('2', 'DECLINED_BY_BANK', '05', 'HARD_DECLINE', 'Refused by the issuer'),
  declined('2 + MAC 02', 'DECLINED_BY_BANK', '05', 'SOFT_FAILURE', 'Refused by the issuer, who advises trying again later', '02'),
  declined('2 + MAC 03', 'DECLINED_BY_BANK', '05', 'HARD_DECLINE', 'Refused by the issuer, who advises never trying again', '03'),
  declined('3', 'DECLINED_BY_BANK', '01', 'HARD_DECLINE', 'Referral: the issuer asks the cardholder to call'),
  error('4', '96', 'Error at the acquirer'),
  declined('5', 'DECLINED_BY_BANK', '62', 'HARD_DECLINE', 'The card is blocked'),
  declined('6', 'INVALID_CARD_DATA', '54', 'HARD_DECLINE', 'The card has expired'),
  declined('7', 'DECLINED', '13', 'HARD_DECLINE', 'The amount is not valid for this card'),
  declined('8', 'INVALID_CARD_DATA', '14', 'HARD_DECLINE', 'The card number is not valid'),
  declined('9', 'DECLINED_BY_BANK', '91', 'SOFT_FAILURE', 'The issuer could not be reached'),
  declined('10', 'DECLINED_BY_BANK', '57', 'HARD_DECLINE', 'The issuer does not allow this kind of transaction'),
  declined('11', 'DECLINED', '1A', 'HARD_DECLINE', '3-D Secure authentication did not succeed'),
  declined('12', 'INSUFFICIENT_FUNDS', '51', 'HARD_DECLINE', 'Not enough balance on the card'),
  declined('12 + MAC 02', 'INSUFFICIENT_FUNDS', '51', 'SOFT_FAILURE', 'Not enough balance; the issuer advises trying again later', '02'),
  declined('14', 'DECLINED_BY_BANK', '59', 'HARD_DECLINE', 'The acquirer suspects fraud'),
  declined('15', 'DECLINED', '17', 'HARD_DECLINE', 'The transaction was cancelled'),
  declined('16', 'DECLINED', '17', 'HARD_DECLINE', 'The shopper cancelled the transaction'),
  declined('20', 'DECLINED', '59', 'HARD_DECLINE', "Refused by Adyen's risk checks (fraud score)"),
  error('21', '96', 'The transaction was not submitted correctly'),
  declined('22', 'DECLINED', '59', 'HARD_DECLINE', "Cancelled by Adyen's risk checks (fraud score)"),
  declined('23', 'DECLINED_BY_BANK', '57', 'HARD_DECLINE', 'The transaction is not permitted for this card or merchant'),
  declined('24', 'INVALID_SECURITY_CODE', 'N7', 'HARD_DECLINE', 'The security code (CVC) was declined'),
  declined('25', 'DECLINED_BY_BANK', '62', 'HARD_DECLINE', 'The card is restricted'),
  declined('26', 'DECLINED_BY_BANK', '05', 'HARD_DECLINE', 'The cardholder revoked the authorization', '21'),
  declined('27', 'DO_NOT_HONOR', '05', 'HARD_DECLINE', 'Declined by the issuer (no specific reason)'),
  declined('27 + MAC 02', 'DO_NOT_HONOR', '05', 'SOFT_FAILURE', 'Declined by the issuer, who advises trying again later', '02'),
  declined('28', 'DECLINED_BY_BANK', '61', 'HARD_DECLINE', "The card's withdrawal amount limit is exceeded"),
  declined('29', 'DECLINED_BY_BANK', '65', 'HARD_DECLINE', "The card's withdrawal count limit is exceeded"),
  declined('31', 'DECLINED_BY_BANK', '59', 'HARD_DECLINE', 'The issuer suspects fraud'),
  declined('32', 'DECLINED_BY_BANK', '05', 'HARD_DECLINE', 'The address verification (AVS) failed'),
  declined('38', 'DECLINED', '1A', 'HARD_DECLINE', 'The issuer requires authentication (3-D Secure)'),
  declined('46', 'DECLINED', '05', 'HARD_DECLINE', 'Blocked by Adyen to prevent excessive retries of a declined card', '03'),
  declined(UNKNOWN_REFUSAL, 'DO_NOT_HONOR', '05', 'HARD_DECLINE', 'Refused for a reason this connector does not know'),
  error(UNKNOWN_ERROR, '96', 'Adyen could not process the payment'),
];

const BY_CODE = new Map(ADYEN_CODES.map((c) => [c.providerCode, c]));

/**
 * The row for Adyen's answer: the `<code> + MAC <advice>` row when there is one, else the code's row (the
 * advice as sent replaces the row's), else the fallback for the result kind.
 */
export function codeRow(refusalReasonCode: string | undefined, resultKind: 'refusal' | 'error', advice: string | null): CodeMapping {
  const code = refusalReasonCode ?? '';
  const exact = advice !== null ? BY_CODE.get(`${code} + MAC ${advice}`) : undefined;
  if (exact) return exact;
  const row = BY_CODE.get(code) ?? BY_CODE.get(resultKind === 'error' ? UNKNOWN_ERROR : UNKNOWN_REFUSAL)!;
  return advice !== null ? { ...row, merchantAdviceCode: advice } : row;
}

/** The two digits of Adyen's `merchantAdviceCode` ("02: Cannot approve at this time…" or "02"), else null. */
export function adviceOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^\s*(\d{2})\b/.exec(value);
  return m ? m[1]! : null;
}
