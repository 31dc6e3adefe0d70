/**
 * SANDBOX_A: the sandbox acquirer of the test-card table (../test-cards.ts), JSON over HTTP.
 *   POST /v1/charges                      {reference, payment_id?, capture, verification?, amount:{value,currency}, card:{number, holder_name, expiry_month, expiry_year, cvc, brand}}
 *   POST /v1/charges/{id}/captures|voids|refunds   {reference, amount:{value,currency}}
 *   GET  /v1/operations/{reference}       → {operation, answer} or 404 (and the reference is tombstoned)
 * Auth: `Authorization: Bearer sk_sandbox_…` (any well-formed sandbox key; anything else → 401).
 *   POST /v1/payment-requests             {reference, payment_id?, method, amount:{value,currency}}   (asynchronous methods:
 *        → {id, status: PENDING, method, action:{kind, …}, expires_at}; acquirer/pending-payments.ts)
 *   POST /v1/payment-requests/{id}/outcome {outcome: PAY|DECLINE|EXPIRE|CANCEL}   (sandbox: the shopper's move) → {id, status, payment_id}
 * Every answer is HTTP 200 with `status` APPROVED | DECLINED | ERROR; a repeated reference gets its first
 * answer; a reference tombstoned by a lookup → 409. Test card 4507990000000085 is approved and recorded
 * at once, and its answer held until the client gives up (a late approval).
 */
import { randomInt } from 'node:crypto';
import { sandboxId } from '../ids.js';
import { behaviourOf } from '../test-cards.js';
import { isLastFour, isPendingMethod, isTokenWallet, isWalletToken, issuePaymentRequest, settlePaymentRequest, SIMULATED_OUTCOMES, tokenTestCard } from '../acquirer/pending-payments.js';
import { startAcquirer, type AcquirerDefinition, type AcquirerOptions, type AcquirerRequest, type Earlier, type Ledger, type LedgerStatus, type OperationKind, type Recorded, type Reply, type RunningAcquirer } from '../acquirer/kit.js';
import { ownEntry } from '../../../platform/own-entry.js';

export const SANDBOX_A_KEY_PATTERN = /^sk_sandbox_[A-Za-z0-9_]{8,120}$/;

const OPERATION = /^\/v1\/operations\/([^/]{1,200})$/;
const REQUEST_OUTCOME = /^\/v1\/payment-requests\/([^/]{1,100})\/outcome$/;
const FOLLOW_UP = /^\/v1\/charges\/([^/]{1,100})\/(captures|voids|refunds)$/;
const FOLLOW_UP_KIND = { captures: 'CAPTURE', voids: 'VOID', refunds: 'REFUND' } as const;
const DECIMAL = /^\d{1,15}(\.\d{1,4})?$/;

const bad = (message: string): Reply => ({ status: 400, body: { error: 'INVALID_REQUEST', message } });

export const acquirerA: AcquirerDefinition = {
  name: 'SANDBOX_A',
  authenticate(headers) {
    const m = /^Bearer (\S+)$/.exec(headers.authorization ?? '');
    return m !== null && SANDBOX_A_KEY_PATTERN.test(m[1]!);
  },
  callerOf(headers) {
    return /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1];
  },
  async handle(req, ledger) {
    if (req.method === 'POST' && req.path === '/v1/charges') return charge(req, ledger);
    if (req.method === 'POST' && req.path === '/v1/payment-requests') return paymentRequest(req, ledger);
    const r = REQUEST_OUTCOME.exec(req.path);
    if (req.method === 'POST' && r) return requestOutcome(decodeURIComponent(r[1]!), req, ledger);
    const f = FOLLOW_UP.exec(req.path);
    if (req.method === 'POST' && f) return followUp(FOLLOW_UP_KIND[f[2] as keyof typeof FOLLOW_UP_KIND], decodeURIComponent(f[1]!), req, ledger);
    const o = OPERATION.exec(req.path);
    if (req.method === 'GET' && o) return lookup(decodeURIComponent(o[1]!), ledger);
    return undefined;
  },
  garble(reply, status, odd) {
    const body = reply.body;
    // An approval keeps its id (its follow-ups name it); everything else the acquirer says is odd.
    if (status !== 'APPROVED') body.id = odd();
    Object.assign(body, {
      status,
      response: { code: odd(), message: odd(300) },
      reason: { code: odd(), message: odd(300) },
      merchant_advice: { code: odd(), message: odd(300) },
      authorization_code: odd(),
      rrn: odd(),
      card: { bin: odd(), last4: odd(), brand: odd(), issuer: odd(300), country: odd(), funding: odd(), product: odd() },
      [odd(40)]: odd(300),
    });
  },
};

export function startAcquirerA(options: AcquirerOptions = {}): Promise<RunningAcquirer> {
  return startAcquirer(acquirerA, options);
}

interface ChargeBody {
  reference?: unknown;
  payment_id?: unknown;
  capture?: unknown;
  verification?: unknown;
  amount?: { value?: unknown; currency?: unknown };
  card?: { number?: unknown; brand?: unknown };
}

/** A reference seen before: its first answer, or 409 when a lookup tombstoned it. */
function replay(earlier: Earlier): Reply {
  if (earlier === 'TOMBSTONED') return { status: 409, body: { error: 'REFERENCE_CLOSED', message: 'this reference was looked up before it arrived and is refused' } };
  return { status: earlier.httpStatus, body: earlier.body, held: earlier.held };
}

/** An invalid request: the first answer when its reference was seen before (checked only now: one read less per call), else 400. */
async function refuse(reference: string, message: string, ledger: Ledger): Promise<Reply> {
  const earlier = await ledger.find(reference);
  return earlier ? replay(earlier) : bad(message);
}

async function charge(req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const b = (req.body ?? {}) as ChargeBody;
  if (typeof b.reference !== 'string' || b.reference.length < 1 || b.reference.length > 200) return bad('reference is required');
  const value = b.amount?.value;
  const currency = b.amount?.currency;
  const number = b.card?.number;
  if (typeof value !== 'string' || !DECIMAL.test(value) || typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return refuse(b.reference, 'amount {value, currency} is required', ledger);
  if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) return refuse(b.reference, 'card.number is required', ledger);
  const brand = typeof b.card?.brand === 'string' ? b.card.brand : 'VISA';
  const kind: OperationKind = b.verification === true ? 'VERIFY' : b.capture === false ? 'AUTHORIZE' : 'PURCHASE';
  const card = behaviourOf(number);
  const id = sandboxId('txn');
  const status: LedgerStatus = card.outcome === 'SUCCEEDED' ? 'APPROVED' : card.outcome === 'DECLINED' ? 'DECLINED' : 'ERROR';
  const authorizationCode = status === 'APPROVED' ? String(randomInt(100000, 999999)) : null;
  const body: Record<string, unknown> = {
    id,
    type: kind,
    reference: b.reference,
    amount: { value, currency },
    status,
    response: { code: card.iso8583[0], message: card.iso8583[1] },
    reason: { code: card.responseCode, message: card.responseMessage },
    authorization_code: authorizationCode,
    rrn: String(randomInt(100_000_000_000, 999_999_999_999)),
    // Masked card and BIN data only, never the PAN or the security code.
    card: { bin: number.slice(0, 6), last4: number.slice(-4), brand, issuer: 'Sandbox Bank', country: 'BR', funding: 'CREDIT', product: PRODUCT[brand] ?? 'CLASSIC' },
    merchant_advice: card.merchantAdvice ? { code: card.merchantAdvice[0], message: card.merchantAdvice[1] } : null,
    ...(card.chargebackFollows ? { simulation: { chargeback_follows: true } } : {}),
    processed_at: new Date().toISOString(),
  };
  const line: Recorded = {
    entry: {
      reference: b.reference,
      payment_id: typeof b.payment_id === 'string' ? b.payment_id : null,
      kind,
      status,
      amount: { value, currency },
      id,
      target_id: null,
      created_at: new Date().toISOString(),
    },
    httpStatus: 200,
    body,
    held: card.answersLate === true,
    ...(card.failsOn ? { failsOn: card.failsOn } : {}),
  };
  // The reference check and the record are one step: of two calls with one reference, one records.
  const earlier = await ledger.record(line);
  if (earlier) return replay(earlier);
  return { status: 200, body, held: line.held, recorded: b.reference };
}

const PRODUCT: Record<string, string> = { VISA: 'CLASSIC', MASTERCARD: 'STANDARD', AMEX: 'GREEN' };

async function followUp(kind: 'CAPTURE' | 'VOID' | 'REFUND', targetId: string, req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const b = (req.body ?? {}) as ChargeBody;
  if (typeof b.reference !== 'string' || b.reference.length < 1 || b.reference.length > 200) return bad('reference is required');
  const reference = b.reference;
  const value = b.amount?.value;
  const currency = b.amount?.currency;
  if (typeof value !== 'string' || !DECIMAL.test(value) || typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return refuse(reference, 'amount {value, currency} is required', ledger);
  let body: Record<string, unknown> = {};
  const earlier = await ledger.followUp(targetId, (target) => {
    const [reason, iso] = refusal(kind, target.status, target.failsOn);
    const status = reason ? 'DECLINED' : 'APPROVED';
    const id = sandboxId('txn');
    body = {
      id,
      type: kind,
      reference,
      original_transaction_id: targetId,
      amount: { value, currency },
      status,
      response: { code: iso[0], message: iso[1] },
      reason: reason ?? { code: 'SUCCEEDED', message: 'Transaction successful' },
      rrn: String(randomInt(100_000_000_000, 999_999_999_999)),
      processed_at: new Date().toISOString(),
    };
    return {
      line: {
        entry: { reference, payment_id: target.paymentId, kind, status, amount: { value, currency }, id, target_id: targetId, created_at: new Date().toISOString() },
        httpStatus: 200,
        body,
        held: false,
        // A refund of a capture finds the card's behaviour on the capture too.
        ...(target.failsOn ? { failsOn: target.failsOn } : {}),
      },
      // A void of an approved authorization releases it; of a purchase, it reverses it.
      voidsTarget: !reason && kind === 'VOID',
    };
  });
  if (earlier === 'NO_TARGET') {
    const seen = await ledger.find(reference);
    return seen ? replay(seen) : { status: 404, body: { error: 'CHARGE_NOT_FOUND', message: `no charge ${targetId}` } };
  }
  if (earlier) return replay(earlier);
  return { status: 200, body, recorded: reference };
}

type Refusal = [reason: { code: string; message: string } | null, iso: [string, string]];

function refusal(kind: 'CAPTURE' | 'VOID' | 'REFUND', targetStatus: string, failsOn: 'CAPTURE' | 'REFUND' | undefined): Refusal {
  if (targetStatus === 'VOIDED' && kind === 'VOID') return [null, ['00', 'Approved or completed successfully']]; // already released: nothing left to do
  if (targetStatus !== 'APPROVED') return [{ code: `${kind}_DECLINED`, message: 'The original transaction is not an open approval' }, ['12', 'Invalid transaction']];
  if (kind === 'CAPTURE' && failsOn === 'CAPTURE') return [{ code: 'CAPTURE_DECLINED', message: 'The acquirer refused the capture: the authorization is no longer valid' }, ['12', 'Invalid transaction']];
  if (kind === 'REFUND' && failsOn === 'REFUND') return [{ code: 'REFUND_DECLINED', message: 'The acquirer refused the refund: the merchant account cannot be debited' }, ['57', 'Transaction not permitted to cardholder']];
  return [null, ['00', 'Approved or completed successfully']];
}

async function lookup(reference: string, ledger: Ledger): Promise<Reply> {
  // Not found: the reference is tombstoned in the same step.
  const seen = await ledger.lookup(reference);
  if (!seen) return { status: 404, body: { error: 'OPERATION_NOT_FOUND', reference } };
  return { status: 200, body: { operation: seen.entry, answer: seen.body } };
}

/** An asynchronous payment: recorded PENDING with the shopper's action and its deadline. */
async function paymentRequest(req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const b = (req.body ?? {}) as ChargeBody & { method?: unknown; country?: unknown; wallet?: { token?: unknown; last_four?: unknown }; payer_account?: { bank_code?: unknown; number?: unknown } };
  if (typeof b.reference !== 'string' || b.reference.length < 1 || b.reference.length > 200) return bad('reference is required');
  // A token wallet: authorized at once as a charge of the test card its last four name (pending-payments.ts).
  if (isTokenWallet(b.method)) {
    if (!isWalletToken(b.wallet?.token) || !isLastFour(b.wallet?.last_four)) return refuse(b.reference, 'wallet {token, last_four} is required', ledger);
    const { reference, payment_id, amount } = b;
    return charge({ ...req, body: { reference, payment_id, amount, capture: true, card: { number: tokenTestCard(b.wallet.last_four), brand: 'VISA' } } }, ledger);
  }
  const payer = b.payer_account;
  if (payer !== undefined && (typeof payer !== 'object' || payer === null || (payer.number != null && (typeof payer.number !== 'string' || !/^[0-9A-Za-z]{4,34}$/.test(payer.number))))) {
    return refuse(b.reference, 'payer_account.number must be 4 to 34 letters or digits', ledger);
  }
  const value = b.amount?.value;
  const currency = b.amount?.currency;
  if (typeof value !== 'string' || !DECIMAL.test(value) || typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return refuse(b.reference, 'amount {value, currency} is required', ledger);
  if (!isPendingMethod(b.method)) return refuse(b.reference, 'method must be PIX, BANK_TRANSFER, OXXO, BOLETO, CASH, PAYPAL, MERCADO_PAGO_WALLET, APPLE_PAY or GOOGLE_PAY', ledger);
  const method = b.method;
  // The test payment methods' amounts (docs/guides/test-cards.md): cents .77 a provider error (the route
  // fails over: nothing was shown), .51 a refusal (the route stops), as cards …0077 and …0010 do.
  const refusal = ownEntry(PENDING_REFUSALS, value.split('.')[1] ?? '');
  if (refusal) {
    const id = sandboxId('pay');
    const body = { id, type: 'PAYMENT_REQUEST', reference: b.reference, method, amount: { value, currency }, status: refusal.status, response: refusal.response, reason: refusal.reason };
    const entry = { reference: b.reference, payment_id: typeof b.payment_id === 'string' ? b.payment_id : null, kind: 'PURCHASE' as const, status: refusal.status, amount: { value, currency }, id, target_id: null, created_at: new Date().toISOString() };
    const earlier = await ledger.record({ entry, httpStatus: 200, body, held: false });
    return earlier ? replay(earlier) : { status: 200, body, recorded: b.reference };
  }
  const issued = await issuePaymentRequest(
    ledger,
    { reference: b.reference, paymentId: typeof b.payment_id === 'string' ? b.payment_id : null, method, ledgerAmount: value, majorAmount: value, currency, country: typeof b.country === 'string' ? b.country : null },
    ({ id, action, expiresAt }) => ({
      id,
      type: 'PAYMENT_REQUEST',
      reference: b.reference,
      method,
      amount: { value, currency },
      status: 'PENDING',
      response: { code: '00', message: 'Approved or completed successfully' },
      reason: { code: 'SUCCEEDED', message: 'Payment request issued: waiting for the shopper' },
      action,
      // The payer's account it will be paid from, masked (the request's number is never kept).
      ...(payer ? { payer_account: { bank_code: typeof payer.bank_code === 'string' ? payer.bank_code : null, last4: typeof payer.number === 'string' ? payer.number.slice(-4) : null } } : {}),
      expires_at: expiresAt,
      processed_at: new Date().toISOString(),
    }),
  );
  if (issued.earlier) return replay(issued.earlier);
  return { status: 200, body: issued.body, recorded: b.reference };
}

async function requestOutcome(id: string, req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const outcome = ownEntry(SIMULATED_OUTCOMES, String((req.body as { outcome?: unknown } | undefined)?.outcome));
  if (!outcome) return bad('outcome must be PAY, DECLINE, EXPIRE or CANCEL');
  const settled = await settlePaymentRequest(ledger, id, outcome);
  if (!settled) return { status: 404, body: { error: 'PAYMENT_REQUEST_NOT_FOUND', message: `no payment request ${id}` } };
  return { status: 200, body: { id, status: settled.status, payment_id: settled.paymentId } };
}

/** A's refusals of payment requests, by the amount's cents. */
const PENDING_REFUSALS: Readonly<Record<string, { status: LedgerStatus; response: { code: string; message: string }; reason: { code: string; message: string } }>> = {
  '77': { status: 'ERROR', response: { code: '96', message: 'System malfunction' }, reason: { code: 'PROVIDER_ERROR', message: 'The acquirer could not issue the payment request' } },
  '51': { status: 'DECLINED', response: { code: '57', message: 'Transaction not permitted' }, reason: { code: 'DECLINED', message: 'The acquirer refused to issue the payment request' } },
};
