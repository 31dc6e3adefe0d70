/**
 * The SANDBOX_B adapter: PaymentProvider over acquirer B's protocol (acquirer-b/server.ts): amounts in
 * minor units, expiry "MM/YY", Basic auth, the reference as both merchantReference and Idempotency-Key.
 * Credentials: `{merchant_account, password}`. B's refusal reasons are translated to our response codes.
 */
import { minorUnits } from '../minor-units.js';
import { ProviderUnavailableError, type Charge, type ConnectionContext, type FollowUp, type ProviderCard, type ProviderLookup, type ProviderResult, type AsyncCharge, type AsyncStart, type SimulatedAsyncOutcome } from '../provider.js';
import type { IssuedAction } from './acquirer/pending-payments.js';
import { SANDBOX_B } from '../registry.js';
import { callAcquirer, type AcquirerAnswer } from './http-call.js';
import { answerToResult, SandboxProvider } from './sandbox-provider.js';
import { ownEntry } from '../../platform/own-entry.js';

/** The account used when a call names no connection: acquirer B accepts any well-formed account and password. */
export const SANDBOX_B_DEFAULT_CREDENTIALS = { merchant_account: 'PayorchSandbox', password: 'sandbox-b-password' } as const;

/** B's refusalReasonCode → our response code and message (docs/guides/test-cards.md shows them per card). */
export const REASONS: Record<string, [string, string]> = {
  '51': ['INSUFFICIENT_FUNDS', 'Insufficient funds'],
  '2': ['DECLINED_BY_BANK', 'Declined by the issuing bank'],
  '24': ['INVALID_SECURITY_CODE', 'Invalid security code'],
  '14': ['INVALID_CARD_DATA', 'Invalid card data'],
  '6': ['REPORTED_STOLEN', 'Card reported stolen'],
  '12': ['DECLINED', 'The original payment is not open'],
};
const ISO: Record<string, string> = {
  '00': 'Approved or completed successfully',
  '05': 'Do not honor',
  '12': 'Invalid transaction',
  '14': 'Invalid card number',
  '43': 'Stolen card, pick up',
  '51': 'Not sufficient funds',
  '96': 'System malfunction',
  N7: 'Decline for CVV2 failure',
};
const ADVICE: Record<string, string> = {
  '01': 'New account information available',
  '02': 'Cannot approve at this time, try again later',
  '03': 'Do not try again',
};

export class SandboxBProvider extends SandboxProvider {
  readonly id = SANDBOX_B;

  verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult> {
    return this.payment({ card: input.card, amount: '0', currency: input.currency ?? 'USD', reference: input.reference, description: 'verify', connection: input.connection }, false);
  }
  purchase(input: Charge): Promise<ProviderResult> {
    return this.payment(input, true);
  }
  authorize(input: Charge): Promise<ProviderResult> {
    return this.payment(input, false);
  }
  capture(input: FollowUp): Promise<ProviderResult> {
    return this.modification('captures', input);
  }
  void(input: FollowUp): Promise<ProviderResult> {
    return this.modification('cancels', input);
  }
  refund(input: FollowUp): Promise<ProviderResult> {
    return this.modification('refunds', input);
  }

  async lookup(input: { reference: string; connection?: ConnectionContext }): Promise<ProviderLookup> {
    const answer = await this.call('GET', `/payments?merchantReference=${encodeURIComponent(input.reference)}`, input.reference, undefined, input.connection);
    if (answer.status === 404) return { found: false };
    const found = (answer.body.payments as Record<string, unknown>[] | undefined)?.[0];
    if (answer.status !== 200 || !found) throw new ProviderUnavailableError(this.id, 'BAD_RESPONSE', `${this.id} lookup answered HTTP ${answer.status}`);
    const { state, ...first } = found;
    return { found: true, result: this.toResult(first), voided: state === 'CANCELLED' };
  }

  async startAsyncPayment(input: AsyncCharge): Promise<AsyncStart> {
    const body = {
      merchantReference: input.reference,
      paymentId: input.paymentId,
      paymentMethod: input.method,
      amountMinor: toMinor(input.amount, input.currency),
      amountMajor: input.amount,
      currency: input.currency,
      countryCode: input.country,
      ...(input.walletToken ? { walletToken: { paymentToken: input.walletToken.paymentToken, cardLastFour: input.walletToken.lastFour } } : {}),
      ...(input.payerAccount
        ? {
            shopperBankAccount: {
              bankCode: input.payerAccount.bankCode,
              branchCode: input.payerAccount.branch,
              accountNumber: input.payerAccount.accountNumber,
              checkDigit: input.payerAccount.accountDigit,
              accountType: input.payerAccount.accountType,
              mandateId: input.payerAccount.mandateId,
            },
          }
        : {}),
    };
    const answer = await this.call('POST', '/pending-payments', input.reference, body, input.connection);
    const b = answer.body as { pspReference?: string; resultCode?: string; action?: Record<string, string>; expiresAt?: string };
    const action = b.action ? neutralAction(b.action) : undefined;
    if (answer.status !== 200 || b.resultCode !== 'PENDING' || !action || typeof b.expiresAt !== 'string') return { result: this.interpret(answer), action: null };
    return { result: this.issuedResult(String(b.pspReference ?? ''), answer.body), action: this.shopperAction(action, b.expiresAt, input) };
  }

  protected async settleAtAcquirer(input: SimulatedAsyncOutcome): Promise<string | undefined> {
    const path = `/pending-payments/${encodeURIComponent(input.providerTransactionId)}/simulate`;
    const answer = await this.call('POST', path, `simulate-${input.providerTransactionId}-${input.outcome}`, { outcome: input.outcome }, input.connection);
    if (answer.status !== 200) return undefined;
    return ownEntry(SETTLED, String(answer.body.resultCode));
  }

  private async payment(input: Charge, capture: boolean): Promise<ProviderResult> {
    const body = {
      merchantReference: input.reference,
      paymentId: input.paymentId,
      amountMinor: toMinor(input.amount, input.currency),
      currency: input.currency,
      pan: input.card.number,
      expiry: `${String(input.card.expirationMonth).padStart(2, '0')}/${String(input.card.expirationYear % 100).padStart(2, '0')}`,
      cvc: input.card.securityCode ?? undefined,
      holderName: input.card.holderName ?? undefined,
      capture,
    };
    return this.interpret(await this.call('POST', '/payments', input.reference, body, input.connection));
  }

  private async modification(path: 'captures' | 'cancels' | 'refunds', input: FollowUp): Promise<ProviderResult> {
    const body = { merchantReference: input.reference, amountMinor: toMinor(input.amount, input.currency), currency: input.currency };
    return this.interpret(await this.call('POST', `/payments/${encodeURIComponent(input.providerTransactionId)}/${path}`, input.reference, body, input.connection));
  }

  private call(method: 'GET' | 'POST', path: string, reference: string, body: unknown, connection: ConnectionContext | undefined): Promise<AcquirerAnswer> {
    const c = this.connectionOf(connection);
    const basic = Buffer.from(`${c.credentials.merchant_account ?? ''}:${c.credentials.password ?? ''}`).toString('base64');
    const headers: Record<string, string> = { authorization: `Basic ${basic}` };
    if (method === 'POST') headers['idempotency-key'] = reference;
    return callAcquirer(this.id, `${this.endpoint.url}${path}`, { method, headers, body }, c.timeoutMs);
  }

  private interpret(answer: AcquirerAnswer): ProviderResult {
    return answerToResult(answer, (body) => this.toResult(body));
  }

  private toResult(body: Record<string, unknown>): ProviderResult {
    const b = body as {
      pspReference?: string;
      resultCode?: string;
      refusalReasonCode?: string;
      refusalReason?: string;
      authCode?: string;
      additionalData?: { isoResponseCode?: string; merchantAdviceCode?: string | null; networkTxReference?: string; issuerName?: string; issuerCountry?: string; fundingSource?: string };
    };
    const outcome = b.resultCode === 'AUTHORISED' ? 'SUCCEEDED' : b.resultCode === 'REFUSED' ? 'DECLINED' : 'ERROR';
    const [responseCode, responseMessage] =
      outcome === 'SUCCEEDED'
        ? ['SUCCEEDED', 'Transaction successful']
        : outcome === 'DECLINED'
          ? (ownEntry(REASONS, b.refusalReasonCode ?? '') ?? ['DECLINED', b.refusalReason ?? 'Transaction declined'])
          : ['PROVIDER_ERROR', 'The provider could not process the transaction'];
    const iso = b.additionalData?.isoResponseCode ?? (outcome === 'ERROR' ? '96' : '05');
    const advice = b.additionalData?.merchantAdviceCode ?? null;
    const d = b.additionalData;
    return {
      outcome,
      providerTransactionId: String(b.pspReference ?? ''),
      responseCode,
      responseMessage,
      iso8583ResponseCode: iso,
      iso8583ResponseMessage: ownEntry(ISO, iso) ?? 'Unknown',
      merchantAdviceCode: advice,
      merchantAdviceCodeMessage: advice ? (ownEntry(ADVICE, advice) ?? null) : null,
      authorizationCode: b.authCode ?? null,
      retrievalReferenceNumber: d?.networkTxReference ?? null,
      ...(d?.issuerName ? { cardInfo: { issuerName: d.issuerName, issuerCode: null, countryCode: d.issuerCountry ?? null, category: null, type: d.fundingSource ?? null } } : {}),
      rawResponse: body,
    };
  }
}

/** A decimal string in major units → an integer in the currency's minor units (B's amounts). */
export function toMinor(amount: string, currency: string): number {
  const digits = minorUnits(currency) ?? 2;
  const [whole, fraction = ''] = amount.split('.');
  return Number(`${whole}${fraction.padEnd(digits, '0').slice(0, digits)}`);
}

/** B's result codes after a sandbox move → the ledger's statuses. */
const SETTLED: Readonly<Record<string, string>> = { AUTHORISED: 'APPROVED', REFUSED: 'DECLINED', EXPIRED: 'EXPIRED', CANCELLED: 'CANCELED', PENDING: 'PENDING' };

/** B's action (camelCase, `type`) in neutral terms; undefined for a type B does not send. */
function neutralAction(a: Record<string, string>): IssuedAction | undefined {
  switch (a.type) {
    case 'qrCode':
      return { kind: 'QR_CODE', qr_code: a.qrCodeData ?? '' };
    case 'bankTransfer':
      return { kind: 'BANK_TRANSFER', bank_name: a.bankName ?? '', beneficiary_name: a.beneficiary ?? '', bank_account: a.accountNumber ?? '', account_type: a.accountType ?? '', reference: a.shopperReference ?? '' };
    case 'voucher':
      return {
        kind: 'VOUCHER',
        voucher_type: a.issuer ?? '',
        reference: a.reference ?? '',
        barcode: a.barcode ?? '',
        barcode_format: a.barcodeFormat ?? '',
        due_date: a.dueDate ?? '',
        instruction: a.instructions ?? '',
      };
    case 'redirect':
      return { kind: 'REDIRECT' };
    default:
      return undefined;
  }
}
