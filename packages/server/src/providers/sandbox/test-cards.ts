/**
 * The sandbox acquirer's test cards (docs/design.md §5, Yuno's testing gateway). Any other valid card
 * succeeds. Codes are what a real acquirer returns: ISO 8583 field 39 and Mastercard merchant advice codes.
 */
import { ownEntry } from '../../platform/own-entry.js';

export interface TestCardBehaviour {
  outcome: 'SUCCEEDED' | 'DECLINED' | 'ERROR';
  responseCode: string;
  responseMessage: string;
  iso8583: [code: string, message: string];
  merchantAdvice: [code: string, message: string] | null;
  chargebackFollows?: boolean;
  /** The authorization or purchase succeeds, and then the provider refuses this follow-up operation. */
  failsOn?: 'CAPTURE' | 'REFUND';
  /** SANDBOX_A records the approval at once and holds its answer until the caller gives up (a late approval). */
  answersLate?: boolean;
}

const approved: TestCardBehaviour = {
  outcome: 'SUCCEEDED',
  responseCode: 'SUCCEEDED',
  responseMessage: 'Transaction successful',
  iso8583: ['00', 'Approved or completed successfully'],
  merchantAdvice: null,
};

const declined = (responseCode: string, responseMessage: string, iso8583: [string, string], merchantAdvice: [string, string] | null): TestCardBehaviour => ({
  outcome: 'DECLINED',
  responseCode,
  responseMessage,
  iso8583,
  merchantAdvice,
});

export const TEST_CARDS: Readonly<Record<string, TestCardBehaviour>> = {
  '4507990000000002': approved,
  '5252440000000002': approved,
  '4507990000000010': declined('INSUFFICIENT_FUNDS', 'Insufficient funds', ['51', 'Not sufficient funds'], ['01', 'New account information available']),
  '4507990000000028': declined('DECLINED_BY_BANK', 'Declined by the issuing bank', ['05', 'Do not honor'], ['03', 'Do not try again']),
  '4507990000000036': declined('DO_NOT_HONOR', 'Do not honor', ['05', 'Do not honor'], ['02', 'Cannot approve at this time, try again later']),
  '4507990000000044': declined('INVALID_SECURITY_CODE', 'Invalid security code', ['N7', 'Decline for CVV2 failure'], null),
  '4507990000000051': declined('INVALID_CARD_DATA', 'Invalid card data', ['14', 'Invalid card number'], ['03', 'Do not try again']),
  '4507990000000069': declined('REPORTED_STOLEN', 'Card reported stolen', ['43', 'Stolen card, pick up'], ['03', 'Do not try again']),
  '4507990000000077': {
    outcome: 'ERROR',
    responseCode: 'PROVIDER_ERROR',
    responseMessage: 'The provider could not process the transaction',
    iso8583: ['96', 'System malfunction'],
    merchantAdvice: ['02', 'Cannot approve at this time, try again later'],
  },
  '4507990000000085': { ...approved, answersLate: true },
  '4000000000000002': declined('DECLINED', 'Transaction declined', ['05', 'Do not honor'], null),
  '4000000000000259': { ...approved, chargebackFollows: true },
  '4507990000000101': { ...approved, failsOn: 'CAPTURE' },
  '4507990000000093': { ...approved, failsOn: 'REFUND' },
};

export function behaviourOf(pan: string): TestCardBehaviour {
  return ownEntry(TEST_CARDS, pan) ?? approved;
}
