/**
 * SANDBOX_B: a second acquirer with its own protocol and answers.
 *   POST /payments                  Idempotency-Key: <merchantReference>
 *        {merchantReference, paymentId?, amountMinor, currency, pan, expiry:"MM/YY", cvc?, holderName?, capture}
 *        (amountMinor 0 = a card verification)
 *   POST /payments/{pspReference}/captures|cancels|refunds   Idempotency-Key, {merchantReference, amountMinor, currency}
 *   GET  /payments?merchantReference=…   → {payments:[…]} or 404 (and the reference is tombstoned)
 *   POST /pending-payments          Idempotency-Key, {merchantReference, paymentId?, paymentMethod, amountMinor, currency}
 *        (asynchronous methods) → {pspReference, resultCode: PENDING, action:{type, …}, expiresAt}
 *   POST /pending-payments/{pspReference}/simulate   {outcome: PAY|DECLINE|EXPIRE|CANCEL} → {pspReference, resultCode}
 * Auth: HTTP Basic `merchantAccount:password` (an account of 3-64 letters/digits/_ and a password of 8+
 * characters; anything else → 401). Answers: `resultCode` AUTHORISED | REFUSED | ERROR with B's own
 * `refusalReason`/`refusalReasonCode`. Its card table is CARDS_B below; any other card is authorised
 * (4507990000000077 and …0085, A's failures, included).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { isLastFour, isPendingMethod, isTokenWallet, isWalletToken, issuePaymentRequest, settlePaymentRequest, SIMULATED_OUTCOMES, tokenTestCard, type IssuedAction } from '../acquirer/pending-payments.js';
import { startAcquirer, type AcquirerDefinition, type AcquirerOptions, type AcquirerRequest, type Earlier, type Ledger, type LedgerStatus, type Reply, type RunningAcquirer } from '../acquirer/kit.js';
import { ownEntry } from '../../../platform/own-entry.js';

/** B's refusals: [refusalReasonCode, refusalReason, ISO 8583 code, merchant advice code]. */
export const CARDS_B: Readonly<Record<string, [string, string, string, string | null]>> = {
  '4507990000000010': ['51', 'Not enough balance', '51', '01'],
  '4507990000000028': ['2', 'Refused', '05', '03'],
  '4507990000000044': ['24', 'CVC Declined', 'N7', null],
  '4507990000000051': ['14', 'Invalid Card Number', '14', '03'],
  '4507990000000069': ['6', 'Stolen Card', '43', '03'],
  '4000000000000002': ['2', 'Refused', '05', null],
};

const FOLLOW_UP = /^\/payments\/([^/]{1,100})\/(captures|cancels|refunds)$/;
const FOLLOW_UP_KIND = { captures: 'CAPTURE', cancels: 'VOID', refunds: 'REFUND' } as const;
const RESULT: Record<string, string> = { APPROVED: 'AUTHORISED', DECLINED: 'REFUSED', ERROR: 'ERROR', VOIDED: 'CANCELLED', PENDING: 'PENDING', EXPIRED: 'EXPIRED', CANCELED: 'CANCELLED' };
const SIMULATE = /^\/pending-payments\/([^/]{1,100})\/simulate$/;

const bad = (message: string): Reply => ({ status: 422, body: { status: 422, errorCode: '702', message } });

export const acquirerB: AcquirerDefinition = {
  name: 'SANDBOX_B',
  authenticate(headers) {
    const m = /^Basic ([A-Za-z0-9+/=]{1,400})$/.exec(headers.authorization ?? '');
    if (!m) return false;
    const [account, ...rest] = Buffer.from(m[1]!, 'base64').toString('utf8').split(':');
    return /^[A-Za-z0-9_]{3,64}$/.test(account ?? '') && rest.join(':').length >= 8;
  },
  callerOf(headers) {
    const m = /^Basic ([A-Za-z0-9+/=]{1,400})$/.exec(headers.authorization ?? '');
    return m ? Buffer.from(m[1]!, 'base64').toString('utf8').split(':')[0] : undefined;
  },
  async handle(req, ledger) {
    if (req.method === 'POST' && req.path === '/payments') return payment(req, ledger);
    if (req.method === 'POST' && req.path === '/pending-payments') return pendingPayment(req, ledger);
    const s = SIMULATE.exec(req.path);
    if (req.method === 'POST' && s) return simulate(decodeURIComponent(s[1]!), req, ledger);
    const f = FOLLOW_UP.exec(req.path);
    if (req.method === 'POST' && f) return modification(FOLLOW_UP_KIND[f[2] as keyof typeof FOLLOW_UP_KIND], decodeURIComponent(f[1]!), req, ledger);
    if (req.method === 'GET' && req.path === '/payments') return lookup(req.query.get('merchantReference') ?? '', ledger);
    return undefined;
  },
  garble(reply, status, odd) {
    const body = reply.body;
    if (status !== 'APPROVED') body.pspReference = odd();
    Object.assign(body, {
      resultCode: RESULT[status],
      refusalReason: odd(300),
      refusalReasonCode: odd(),
      authCode: odd(),
      additionalData: { isoResponseCode: odd(), merchantAdviceCode: odd(), networkTxReference: odd(), issuerName: odd(300), issuerCountry: odd(), fundingSource: odd() },
      [odd(40)]: odd(300),
    });
  },
};

export function startAcquirerB(options: AcquirerOptions = {}): Promise<RunningAcquirer> {
  return startAcquirer(acquirerB, options);
}

function idempotencyKey(req: AcquirerRequest): string | undefined {
  const key = req.headers['idempotency-key'];
  return typeof key === 'string' && key.length >= 1 && key.length <= 200 ? key : undefined;
}

/** A key seen before: its first answer, or 409 when a lookup tombstoned it. */
function replay(earlier: Earlier): Reply {
  if (earlier === 'TOMBSTONED') return { status: 409, body: { status: 409, errorCode: '704', message: 'request already processed or closed' } };
  return { status: earlier.httpStatus, body: earlier.body, held: earlier.held };
}

/** An invalid request: the first answer when its key was seen before (checked only now: one read less per call), else 422. */
async function refuse(key: string, message: string, ledger: Ledger): Promise<Reply> {
  const earlier = await ledger.find(key);
  return earlier ? replay(earlier) : bad(message);
}

interface PaymentBody {
  merchantReference?: unknown;
  paymentId?: unknown;
  amountMinor?: unknown;
  currency?: unknown;
  pan?: unknown;
  expiry?: unknown;
  capture?: unknown;
}

const validAmount = (b: PaymentBody) => Number.isSafeInteger(b.amountMinor) && (b.amountMinor as number) >= 0 && typeof b.currency === 'string' && /^[A-Z]{3}$/.test(b.currency);

async function payment(req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const key = idempotencyKey(req);
  if (!key) return bad('Idempotency-Key header is required');
  const b = (req.body ?? {}) as PaymentBody;
  if (typeof b.merchantReference !== 'string' || b.merchantReference.length > 200) return refuse(key, 'merchantReference is required', ledger);
  if (!validAmount(b)) return refuse(key, 'amountMinor and currency are required', ledger);
  if (typeof b.pan !== 'string' || !/^\d{12,19}$/.test(b.pan)) return refuse(key, 'pan is required', ledger);
  if (typeof b.expiry !== 'string' || !/^(0[1-9]|1[0-2])\/\d{2}$/.test(b.expiry)) return refuse(key, 'expiry is MM/YY', ledger);
  const amountMinor = b.amountMinor as number;
  const currency = b.currency as string;
  const refusal = ownEntry(CARDS_B, b.pan);
  const status: LedgerStatus = refusal ? 'DECLINED' : 'APPROVED';
  const pspReference = `psp${randomBytes(8).toString('hex').toUpperCase()}`;
  const kind = amountMinor === 0 ? 'VERIFY' : b.capture === false ? 'AUTHORIZE' : 'PURCHASE';
  const body: Record<string, unknown> = {
    pspReference,
    merchantReference: b.merchantReference,
    resultCode: RESULT[status],
    ...(refusal ? { refusalReason: refusal[1], refusalReasonCode: refusal[0] } : { authCode: String(randomInt(100000, 999999)) }),
    amount: { minor: amountMinor, currency },
    captured: kind === 'PURCHASE' && !refusal,
    additionalData: {
      cardBin: b.pan.slice(0, 6),
      cardSummary: b.pan.slice(-4),
      issuerName: 'Sandbox Bank B',
      issuerCountry: 'BR',
      fundingSource: 'CREDIT',
      isoResponseCode: refusal ? refusal[2] : '00',
      merchantAdviceCode: refusal?.[3] ?? null,
      networkTxReference: String(randomInt(100_000_000_000, 999_999_999_999)),
    },
  };
  // The key check and the record are one step: of two calls with one key, one records.
  const earlier = await ledger.record({
    entry: { reference: key, payment_id: typeof b.paymentId === 'string' ? b.paymentId : null, kind, status, amount: { value: String(amountMinor), currency }, id: pspReference, target_id: null, created_at: new Date().toISOString() },
    httpStatus: 200,
    body,
    held: false,
  });
  if (earlier) return replay(earlier);
  return { status: 200, body, recorded: key };
}

async function modification(kind: 'CAPTURE' | 'VOID' | 'REFUND', target: string, req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const key = idempotencyKey(req);
  if (!key) return bad('Idempotency-Key header is required');
  const b = (req.body ?? {}) as PaymentBody;
  if (!validAmount(b)) return refuse(key, 'amountMinor and currency are required', ledger);
  let body: Record<string, unknown> = {};
  const earlier = await ledger.followUp(target, (original) => {
    const open = original.status === 'APPROVED' || (kind === 'VOID' && original.status === 'VOIDED');
    const status: LedgerStatus = open ? 'APPROVED' : 'DECLINED';
    const pspReference = `psp${randomBytes(8).toString('hex').toUpperCase()}`;
    body = {
      pspReference,
      originalReference: target,
      merchantReference: typeof b.merchantReference === 'string' ? b.merchantReference : key,
      resultCode: RESULT[status],
      ...(open ? {} : { refusalReason: 'Original payment is not open', refusalReasonCode: '12' }),
      amount: { minor: b.amountMinor, currency: b.currency },
      additionalData: { isoResponseCode: open ? '00' : '12' },
    };
    return {
      line: {
        entry: { reference: key, payment_id: original.paymentId, kind, status, amount: { value: String(b.amountMinor), currency: b.currency as string }, id: pspReference, target_id: target, created_at: new Date().toISOString() },
        httpStatus: 200,
        body,
        held: false,
      },
      voidsTarget: open && kind === 'VOID',
    };
  });
  if (earlier === 'NO_TARGET') {
    const seen = await ledger.find(key);
    return seen ? replay(seen) : { status: 404, body: { status: 404, errorCode: '167', message: 'Original pspReference required for this operation' } };
  }
  if (earlier) return replay(earlier);
  return { status: 200, body, recorded: key };
}

async function lookup(reference: string, ledger: Ledger): Promise<Reply> {
  if (reference.length < 1 || reference.length > 200) return bad('merchantReference is required');
  // Not found: the reference is tombstoned in the same step.
  const seen = await ledger.lookup(reference);
  if (!seen) return { status: 404, body: { payments: [] } };
  return { status: 200, body: { payments: [{ ...seen.body, state: RESULT[seen.entry.status] }] } };
}

/** B names an action's fields its own way (camelCase, `type`). */
function actionB(a: IssuedAction): Record<string, unknown> {
  switch (a.kind) {
    case 'QR_CODE':
      return { type: 'qrCode', qrCodeData: a.qr_code };
    case 'BANK_TRANSFER':
      return { type: 'bankTransfer', bankName: a.bank_name, beneficiary: a.beneficiary_name, accountNumber: a.bank_account, accountType: a.account_type, shopperReference: a.reference };
    case 'VOUCHER':
      return { type: 'voucher', issuer: a.voucher_type, reference: a.reference, barcode: a.barcode, barcodeFormat: a.barcode_format, dueDate: a.due_date, instructions: a.instruction };
    case 'REDIRECT':
      return { type: 'redirect' };
  }
}

/** An asynchronous payment (amounts in minor units, as B's card payments). */
async function pendingPayment(req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const key = idempotencyKey(req);
  if (!key) return bad('Idempotency-Key header is required');
  const b = (req.body ?? {}) as PaymentBody & { paymentMethod?: unknown; amountMajor?: unknown; countryCode?: unknown; walletToken?: { paymentToken?: unknown; cardLastFour?: unknown }; shopperBankAccount?: { bankCode?: unknown; accountNumber?: unknown } };
  if (typeof b.merchantReference !== 'string' || b.merchantReference.length > 200) return refuse(key, 'merchantReference is required', ledger);
  if (!validAmount(b)) return refuse(key, 'amountMinor and currency are required', ledger);
  // A token wallet: authorized at once as a payment with the test card its last four name (pending-payments.ts).
  if (isTokenWallet(b.paymentMethod)) {
    if (!isWalletToken(b.walletToken?.paymentToken) || !isLastFour(b.walletToken?.cardLastFour)) return refuse(key, 'walletToken {paymentToken, cardLastFour} is required', ledger);
    const { merchantReference, paymentId, amountMinor, currency } = b;
    return payment({ ...req, body: { merchantReference, paymentId, amountMinor, currency, pan: tokenTestCard(b.walletToken.cardLastFour), expiry: '12/99', capture: true } }, ledger);
  }
  const account = b.shopperBankAccount;
  if (account !== undefined && (typeof account !== 'object' || account === null || (account.accountNumber != null && (typeof account.accountNumber !== 'string' || !/^[0-9A-Za-z]{4,34}$/.test(account.accountNumber))))) {
    return refuse(key, 'shopperBankAccount.accountNumber must be 4 to 34 letters or digits', ledger);
  }
  if (!isPendingMethod(b.paymentMethod)) return refuse(key, 'paymentMethod is not one B issues', ledger);
  const method = b.paymentMethod;
  const amountMinor = b.amountMinor as number;
  const currency = b.currency as string;
  const major = typeof b.amountMajor === 'string' && /^\d{1,15}(\.\d{1,4})?$/.test(b.amountMajor) ? b.amountMajor : String(amountMinor);
  const issued = await issuePaymentRequest(
    ledger,
    { reference: key, paymentId: typeof b.paymentId === 'string' ? b.paymentId : null, method, ledgerAmount: String(amountMinor), majorAmount: major, currency, country: typeof b.countryCode === 'string' ? b.countryCode : null },
    ({ id, action, expiresAt }) => ({
      pspReference: id,
      merchantReference: b.merchantReference,
      paymentMethod: method,
      resultCode: 'PENDING',
      amount: { minor: amountMinor, currency },
      action: actionB(action),
      ...(account ? { shopperBankAccount: { bankCode: typeof account.bankCode === 'string' ? account.bankCode : null, accountSummary: typeof account.accountNumber === 'string' ? account.accountNumber.slice(-4) : null } } : {}),
      expiresAt,
      additionalData: { isoResponseCode: '00' },
    }),
  );
  if (issued.earlier) return replay(issued.earlier);
  return { status: 200, body: issued.body, recorded: key };
}

async function simulate(pspReference: string, req: AcquirerRequest, ledger: Ledger): Promise<Reply> {
  const outcome = ownEntry(SIMULATED_OUTCOMES, String((req.body as { outcome?: unknown } | undefined)?.outcome));
  if (!outcome) return bad('outcome must be PAY, DECLINE, EXPIRE or CANCEL');
  const settled = await settlePaymentRequest(ledger, pspReference, outcome);
  if (!settled) return { status: 404, body: { status: 404, errorCode: '167', message: `no pending payment ${pspReference}` } };
  return { status: 200, body: { pspReference, resultCode: RESULT[settled.status], paymentId: settled.paymentId } };
}
