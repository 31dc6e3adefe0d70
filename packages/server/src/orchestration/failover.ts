/**
 * The failover table (docs/design.md "Failover", docs/guides/routing.md "Failover and provider health"):
 * what one provider attempt's outcome means for the payment's route. ONE place; the orchestrator, the
 * circuit breaker and the docs follow it.
 *
 * - APPROVED: the payment succeeded (or is authorized) at this provider. Stop.
 * - HARD_DECLINE: the issuer refused the card for a reason another provider cannot change (insufficient
 *   funds, stolen, invalid card, "do not try again"). Stop: retrying it elsewhere is what card schemes fine
 *   merchants for (excessive retry programmes).
 * - SOFT_FAILURE: the provider (or the issuer behind it) could not process it now: try the next step.
 * - UNKNOWN: sent, and no answer: the provider may have charged the card. Try the next step (the payer is
 *   waiting), and reconciliation asks this provider later; a late approval is voided there.
 */
import { UNAVAILABLE_KINDS, type ProviderResult, type UnavailableKind } from '../providers/provider.js';
import { OTHER, RESPONSE_CODES } from '../providers/provider-values.js';

export type FailoverDecision = 'APPROVED' | 'HARD_DECLINE' | 'SOFT_FAILURE' | 'UNKNOWN';

/** One attempt's outcome: the provider's answer, or why there was none (ProviderUnavailableError.kind). */
export type AttemptAnswer =
  | { answered: true; result: Pick<ProviderResult, 'outcome' | 'iso8583ResponseCode' | 'merchantAdviceCode'> }
  | { answered: false; kind: UnavailableKind };

/** Merchant advice codes (Mastercard MAC, Visa's retry categories map onto them) that allow a retry later. */
const RETRY_LATER_ADVICE = new Set(['02']); // 02: cannot approve at this time, try again later

/** Merchant advice codes that forbid any retry of the card: they override every other soft signal. */
const NEVER_RETRY_ADVICE = new Set([
  '03', // do not try again
  '21', // payment cancellation (the cardholder stopped recurring payments)
]);

/**
 * ISO 8583 field 39 codes that say the issuer or the network could not decide (not that it refused the
 * card): another acquirer may reach the issuer through a path that works.
 */
const ISSUER_UNAVAILABLE_ISO = new Set([
  '19', // re-enter transaction
  '28', // file temporarily unavailable
  '68', // response received too late
  '90', // cut-off in progress
  '91', // issuer or switch inoperative
  '92', // financial institution or intermediate network facility cannot be found for routing
  '96', // system malfunction
]);

export function failoverDecision(answer: AttemptAnswer): FailoverDecision {
  if (!answer.answered) {
    // No answer at all: sent (TIMEOUT, CONNECTION_CUT) → the provider may have acted. NOT_SENT certainly did
    // not reach it. BAD_RESPONSE is an answer we cannot read (an HTTP 5xx, a broken body): soft for routing,
    // and the attempt is still looked up by reconciliation (maybeProcessed).
    return answer.kind === 'TIMEOUT' || answer.kind === 'CONNECTION_CUT' ? 'UNKNOWN' : 'SOFT_FAILURE';
  }
  const { outcome, iso8583ResponseCode: iso, merchantAdviceCode: advice } = answer.result;
  if (outcome === 'SUCCEEDED') return 'APPROVED';
  if (outcome === 'ERROR') return 'SOFT_FAILURE';
  if (advice !== null && NEVER_RETRY_ADVICE.has(advice)) return 'HARD_DECLINE';
  if (advice !== null && RETRY_LATER_ADVICE.has(advice)) return 'SOFT_FAILURE';
  if (ISSUER_UNAVAILABLE_ISO.has(iso)) return 'SOFT_FAILURE';
  return 'HARD_DECLINE';
}

/** Whether the decision moves the payment on to the next step of its route. */
export const movesOn = (decision: FailoverDecision) => decision === 'SOFT_FAILURE' || decision === 'UNKNOWN';

/** The table as the docs render it (test/failover.test.ts checks each row against failoverDecision). */
export const FAILOVER_TABLE: readonly { answer: string; example: string; decision: FailoverDecision }[] = [
  { answer: 'Approved', example: 'ISO 00', decision: 'APPROVED' },
  { answer: 'Provider error (outcome ERROR)', example: 'ISO 96 system malfunction', decision: 'SOFT_FAILURE' },
  { answer: 'Not sent (connection refused, DNS, TLS)', example: 'NOT_SENT', decision: 'SOFT_FAILURE' },
  { answer: 'Unreadable answer (HTTP 5xx, malformed body)', example: 'BAD_RESPONSE', decision: 'SOFT_FAILURE' },
  { answer: 'No answer within the connection timeout', example: 'TIMEOUT', decision: 'UNKNOWN' },
  { answer: 'Connection cut before the answer', example: 'CONNECTION_CUT', decision: 'UNKNOWN' },
  { answer: 'Decline, merchant advice "try again later"', example: 'ISO 05 + MAC 02', decision: 'SOFT_FAILURE' },
  { answer: 'Decline, issuer or network unavailable', example: 'ISO 19, 28, 68, 90, 91, 92, 96', decision: 'SOFT_FAILURE' },
  { answer: 'Decline, merchant advice "do not try again" / cancelled', example: 'MAC 03, MAC 21 (any ISO code)', decision: 'HARD_DECLINE' },
  { answer: 'Insufficient funds', example: 'ISO 51', decision: 'HARD_DECLINE' },
  { answer: 'Do not honor', example: 'ISO 05 (no MAC, or MAC 03)', decision: 'HARD_DECLINE' },
  { answer: 'Stolen / lost card', example: 'ISO 43, 41', decision: 'HARD_DECLINE' },
  { answer: 'Invalid card number', example: 'ISO 14', decision: 'HARD_DECLINE' },
  { answer: 'Security code (CVV) failure', example: 'ISO N7', decision: 'HARD_DECLINE' },
  { answer: 'Any other decline', example: 'e.g. ISO 57, 62', decision: 'HARD_DECLINE' },
];

/**
 * The reasons payorch_failovers_total is labelled with: why there was no answer, or our response code of
 * the answer (ERROR when it has none), anything else OTHER. A fixed list: one series per reason at most,
 * whatever providers answer.
 */
export const FAILOVER_REASONS: readonly string[] = [...UNAVAILABLE_KINDS, ...RESPONSE_CODES, 'ERROR', OTHER];
const FAILOVER_REASON_SET: ReadonlySet<string> = new Set(FAILOVER_REASONS);

export function failoverReason(answer: { answered: true; result?: Pick<ProviderResult, 'responseCode'> } | { answered: false; kind: UnavailableKind }): string {
  const reason = answer.answered ? (answer.result?.responseCode ?? 'ERROR') : answer.kind;
  return FAILOVER_REASON_SET.has(reason) ? reason : OTHER;
}
