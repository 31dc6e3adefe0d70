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

/**
 * One attempt's outcome: the provider's answer, or why there was none (ProviderUnavailableError.kind);
 * `undecided`: the provider answered that it has not decided yet (ProviderUndecidedError), an unknown outcome
 * from a working provider.
 */
export type AttemptAnswer =
  | { answered: true; result: Pick<ProviderResult, 'outcome' | 'iso8583ResponseCode' | 'merchantAdviceCode'> }
  | { answered: false; kind: UnavailableKind; undecided?: true };

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

/** One row of the failover table: what a try's outcome looks like, and what follows. */
export interface FailoverRule {
  /** The routing guide's "the provider answered" cell (Markdown), built from the same code sets the rule matches. */
  answer: string;
  /** The guide's "what happens" cell. */
  effect: string;
  decision: FailoverDecision;
  matches(answer: AttemptAnswer): boolean;
  /** Answers this row decides (the guide names them; the test checks this row is the first to match each). */
  examples?: readonly { iso: string; advice?: string; what: string }[];
}

const list = (codes: Iterable<string>) => [...codes].map((c) => `\`${c}\``).join(', ');
const declined = (a: AttemptAnswer) => a.answered && a.result.outcome === 'DECLINED';
const adviceIn = (set: ReadonlySet<string>) => (a: AttemptAnswer) => declined(a) && a.answered && a.result.merchantAdviceCode !== null && set.has(a.result.merchantAdviceCode);
const NEXT_STEP = 'the next step is tried';
const STOP = 'the payment is `DECLINED`: no other provider is asked';

/**
 * THE failover table, read top down: the first row that matches decides. failoverDecision walks it, and
 * docs/guides/routing.md renders it between its `failover-table` markers (test/failover.test.ts keeps
 * them equal), so the guide cannot say something the code does not do.
 */
export const FAILOVER_RULES: readonly FailoverRule[] = [
  {
    answer: 'could not be reached (`NOT_SENT`: connection refused, DNS, TLS), or an unreadable answer (`BAD_RESPONSE`: an HTTP 5xx, a broken body)',
    effect: NEXT_STEP,
    decision: 'SOFT_FAILURE',
    matches: (a) => !a.answered && a.kind !== 'TIMEOUT' && a.kind !== 'CONNECTION_CUT',
  },
  {
    answer: "nothing within the connection's `timeout_ms` (`TIMEOUT`), or the connection broke before the answer (`CONNECTION_CUT`)",
    effect: `${NEXT_STEP}; the unanswered try stays \`PENDING\` until the reconciliation asks that provider what happened (below)`,
    decision: 'UNKNOWN',
    matches: (a) => !a.answered && (a.kind === 'TIMEOUT' || a.kind === 'CONNECTION_CUT'),
  },
  {
    answer: 'approved',
    effect: 'the payment is `SUCCEEDED` (or `PENDING` / `AUTHORIZED` with `capture: false`): no other provider is asked',
    decision: 'APPROVED',
    matches: (a) => a.answered && a.result.outcome === 'SUCCEEDED',
  },
  {
    answer: 'a provider error (`ERROR`), whatever its codes',
    effect: NEXT_STEP,
    decision: 'SOFT_FAILURE',
    matches: (a) => a.answered && a.result.outcome === 'ERROR',
  },
  {
    answer: `declined with merchant advice ${list(NEVER_RETRY_ADVICE)} ("do not try again", "cancelled"), whatever the ISO 8583 code`,
    effect: `${STOP} (a *hard* decline)`,
    decision: 'HARD_DECLINE',
    matches: adviceIn(NEVER_RETRY_ADVICE),
    examples: [{ iso: '91', advice: '03', what: 'issuer inoperative, but do not try again' }],
  },
  {
    answer: `declined with merchant advice ${list(RETRY_LATER_ADVICE)} "try again later", whatever the ISO 8583 code`,
    effect: `${NEXT_STEP} (a *soft* decline)`,
    decision: 'SOFT_FAILURE',
    matches: adviceIn(RETRY_LATER_ADVICE),
    examples: [{ iso: '05', advice: '02', what: 'do not honor, try again later, as test card …0036' }],
  },
  {
    answer: `declined with ISO 8583 ${list(ISSUER_UNAVAILABLE_ISO)} (the issuer or the network could not decide)`,
    effect: `${NEXT_STEP} (a *soft* decline)`,
    decision: 'SOFT_FAILURE',
    matches: (a) => declined(a) && a.answered && ISSUER_UNAVAILABLE_ISO.has(a.result.iso8583ResponseCode),
  },
  {
    answer: 'any other decline',
    effect: `${STOP} (a *hard* decline: retrying it elsewhere is what card schemes fine merchants for)`,
    decision: 'HARD_DECLINE',
    matches: declined,
    examples: [
      { iso: '51', what: 'insufficient funds' },
      { iso: '05', what: 'do not honor' },
      { iso: '43', what: 'stolen card' },
      { iso: '41', what: 'lost card' },
      { iso: '14', what: 'invalid card' },
      { iso: 'N7', what: 'security code' },
    ],
  },
];

/** The first row of FAILOVER_RULES that matches (every answer matches one: the last takes any decline). */
export function failoverRule(answer: AttemptAnswer): FailoverRule {
  const rule = FAILOVER_RULES.find((r) => r.matches(answer));
  if (!rule) throw new Error(`no failover rule for ${JSON.stringify(answer)}`);
  return rule;
}

export const failoverDecision = (answer: AttemptAnswer): FailoverDecision => failoverRule(answer).decision;

/** Whether the decision moves the payment on to the next step of its route. */
export const movesOn = (decision: FailoverDecision) => decision === 'SOFT_FAILURE' || decision === 'UNKNOWN';

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
