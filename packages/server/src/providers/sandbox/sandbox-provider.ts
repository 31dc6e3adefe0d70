import { createHash, randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Queryable } from '../../db/database.js';
import {
  NotificationSignatureError,
  type AsyncCharge,
  type AsyncStart,
  type Charge,
  type ChargebackEvent,
  type ConnectionContext,
  type DisputeEvidenceAck,
  type DisputeEvidenceForward,
  type FollowUp,
  type PaymentProvider,
  type ProviderCard,
  type ProviderLookup,
  type ProviderResult,
  type ShopperAction,
  type SimulatedAsyncOutcome,
  type SimulatedChargeback,
  type WebhookHeaders,
} from '../provider.js';
import type { IssuedAction } from './acquirer/pending-payments.js';
import type { AcquirerAnswer } from './http-call.js';
import { chargebackReason, describeReasonCode } from './chargeback-reasons.js';
import { API_BASE_PATH } from '../../http/spec.js';
import { loadNotificationSecret } from './notification-secret.js';
import { sandboxRepository } from './repository.js';
import { sandboxId } from './ids.js';
import { sandboxConnectionEvents } from './sandbox-notifications.js';
import type { ParsedNotification } from '../connector.js';
import type { PurposeBox } from '../../keyring/secret-box.js';

/** The provider id sandbox notifications arrive under (/v1/providers/sandbox/notifications), for both acquirers. */
export const SANDBOX_NOTIFICATION_SOURCE = 'sandbox';

export interface SandboxProviderOptions {
  /**
   * Where the sandbox keeps its own state: the notification signing secret and the evidence it
   * received. Without it, only the card calls work (enough for code that never receives notifications).
   */
  db?: Queryable;
  /** Seals the signing secret at rest (providerSecretBox of the vault keyring); required with `db`. */
  secrets?: PurposeBox;
  /**
   * Sandbox mode (SANDBOX): the hosted enrollment page for non-card methods and the automatic chargeback
   * of test card 4000000000000259. Off, neither exists: no page approves an enrollment without a bank,
   * no chargeback arrives that no issuer sent.
   */
  sandboxMode?: boolean;
}

/** Where an adapter reaches its acquirer, and how when a call names no connection. */
export interface SandboxEndpoint {
  /** The acquirer's base URL (http://127.0.0.1:port). */
  url: string;
  /** Credentials and timeout used when a call names no connection (the sandbox default credentials). */
  defaultConnection: ConnectionContext;
}

/**
 * What both sandbox adapters share, one instance for both: the notification signing secret (one
 * 'sandbox' secret, generated once and stored sealed), the evidence ledger and the sandbox mode.
 */
export class SandboxShared {
  readonly db: Queryable | undefined;
  readonly secrets: PurposeBox | undefined;
  readonly sandboxMode: boolean;
  private secret: Promise<string> | undefined;

  constructor(options: SandboxProviderOptions = {}) {
    this.db = options.db;
    this.secrets = options.secrets;
    this.sandboxMode = options.sandboxMode ?? false;
  }

  notificationSecret(): Promise<string> {
    if (!this.secrets) return Promise.reject(new Error('sandbox provider: no secret box configured'));
    this.secret ??= loadNotificationSecret(this.requireDb(), this.secrets, SANDBOX_NOTIFICATION_SOURCE).catch((err: unknown) => {
      this.secret = undefined;
      throw err;
    });
    return this.secret;
  }

  requireDb(): Queryable {
    if (!this.db) throw new Error('sandbox provider: no database configured');
    return this.db;
  }
}

/**
 * The base of the two sandbox adapters (SandboxAProvider, SandboxBProvider): card calls go over HTTP to
 * the acquirer (subclasses speak its protocol); what a sandbox acquirer does besides (signing chargeback
 * notifications per Standard Webhooks, receiving dispute evidence, the hosted redirect enrollment page)
 * stays in-process here, shared by both, unchanged: notifications arrive as provider `sandbox`.
 * Evidence forwarding is recorded in this service's database (sandbox_evidence) rather than sent over
 * HTTP: it is outside the payment path the acquirers simulate.
 */
export abstract class SandboxProvider implements PaymentProvider {
  abstract readonly id: string;
  /** Both acquirers tombstone a reference their lookup does not find (a late call under it is refused): "not found" is final. */
  readonly lookupClosesReference = true;
  readonly notificationSource = SANDBOX_NOTIFICATION_SOURCE;
  readonly startRedirectEnrollment?: PaymentProvider['startRedirectEnrollment'];

  constructor(
    protected readonly shared: SandboxShared,
    protected readonly endpoint: SandboxEndpoint,
  ) {
    // The page is served by this server (vault/sandbox-pages.ts, mounted in sandbox mode only).
    if (shared.sandboxMode) {
      this.startRedirectEnrollment = async ({ vaultedToken, baseUrl }) => ({ redirectUrl: `${baseUrl}${API_BASE_PATH}/sandbox/enrollments/${vaultedToken}` });
    }
  }

  abstract lookup(input: { reference: string; connection?: ConnectionContext }): Promise<ProviderLookup>;
  abstract verify(input: { card: ProviderCard; currency: string | null; reference: string; connection?: ConnectionContext }): Promise<ProviderResult>;
  abstract purchase(input: Charge): Promise<ProviderResult>;
  abstract authorize(input: Charge): Promise<ProviderResult>;
  abstract capture(input: FollowUp): Promise<ProviderResult>;
  abstract void(input: FollowUp): Promise<ProviderResult>;
  abstract refund(input: FollowUp): Promise<ProviderResult>;
  /** Asynchronous methods: each acquirer's payment-request call (acquirer/pending-payments.ts). */
  abstract startAsyncPayment(input: AsyncCharge): Promise<AsyncStart>;
  /** The acquirer's sandbox move on a pending payment; its status after (the ledger's word), or undefined when it has no such payment. */
  protected abstract settleAtAcquirer(input: SimulatedAsyncOutcome): Promise<string | undefined>;

  /**
   * Sandbox: the acquirer ends the pending payment (its ledger decides: a payment past its deadline is
   * EXPIRED whatever was asked), then the notification it sends about it, signed like every other.
   */
  async simulateAsyncOutcome(input: SimulatedAsyncOutcome): Promise<{ rawBody: string; headers: WebhookHeaders }> {
    const status = await this.settleAtAcquirer(input);
    const outcome = status === undefined ? undefined : NOTIFIED_OUTCOME[status];
    if (!outcome) throw new Error(`sandbox provider: the acquirer reports ${String(status)} for ${input.providerTransactionId}`);
    const id = sandboxId('ntf', randomBytes(10));
    const at = new Date();
    const rawBody = JSON.stringify({ id, type: 'PAYMENT_SETTLED', created_at: at.toISOString(), data: { provider_transaction_id: input.providerTransactionId, outcome, reason: REASON[outcome] } });
    return { rawBody, headers: await this.sign(id, at, rawBody) };
  }

  /** An issued payment request as a result: SUCCEEDED means the action was issued (the payment waits for the shopper). */
  protected issuedResult(providerTransactionId: string, raw: Record<string, unknown>): ProviderResult {
    return {
      outcome: 'SUCCEEDED',
      providerTransactionId,
      responseCode: 'SUCCEEDED',
      responseMessage: 'Payment request issued: waiting for the shopper',
      iso8583ResponseCode: '00',
      iso8583ResponseMessage: 'Approved or completed successfully',
      merchantAdviceCode: null,
      merchantAdviceCodeMessage: null,
      authorizationCode: null,
      retrievalReferenceNumber: null,
      rawResponse: raw,
    };
  }

  /** The acquirer's action (neutral terms) as the shopper is shown it; a wallet's page is the sandbox page this server serves. */
  protected shopperAction(action: IssuedAction, expiresAt: string, input: AsyncCharge): ShopperAction {
    switch (action.kind) {
      case 'QR_CODE':
        return { kind: 'QR_CODE', qrCode: action.qr_code, expiresAt };
      case 'BANK_TRANSFER':
        return {
          kind: 'BANK_TRANSFER',
          bankName: action.bank_name,
          beneficiaryName: action.beneficiary_name,
          bankAccount: action.bank_account,
          accountType: action.account_type,
          reference: action.reference,
          expiresAt,
        };
      case 'VOUCHER':
        return {
          kind: 'VOUCHER',
          voucherType: action.voucher_type,
          reference: action.reference,
          barcode: action.barcode,
          barcodeFormat: action.barcode_format,
          dueDate: action.due_date,
          instruction: action.instruction,
          expiresAt,
        };
      case 'REDIRECT':
        return { kind: 'REDIRECT', redirectUrl: `${input.baseUrl}${API_BASE_PATH}/sandbox/payments/${input.paymentId}/wallet`, expiresAt };
    }
  }

  protected connectionOf(connection: ConnectionContext | undefined): ConnectionContext {
    return connection ?? this.endpoint.defaultConnection;
  }

  async forwardDisputeEvidence(input: DisputeEvidenceForward): Promise<DisputeEvidenceAck> {
    const db = this.shared.requireDb();
    // A real acquirer checks what it receives: a corrupted document is not accepted.
    for (const doc of input.evidence) {
      if (createHash('sha256').update(doc.content).digest('hex') !== doc.sha256) {
        throw new Error(`sandbox provider: evidence ${doc.id} does not match its SHA-256`);
      }
    }
    const providerDisputeId = sandboxId('dsp', createHash('sha256').update(input.chargebackId ?? input.paymentId).digest().subarray(0, 8));
    const stored = await sandboxRepository.recordForward(db, {
      reference: input.reference,
      providerDisputeId,
      paymentId: input.paymentId,
      chargebackId: input.chargebackId,
      documents: input.evidence.map((d) => ({ id: d.id, file_name: d.fileName, category: d.category, sha256: d.sha256, size: d.content.length })),
    });
    return { providerDisputeId: stored.providerDisputeId, duplicate: stored.deliveries > 1 };
  }

  /** The body once its Standard Webhooks signature (the sandbox's secret) is verified; NotificationSignatureError otherwise. */
  private async verified(rawBody: string, headers: Partial<WebhookHeaders>): Promise<unknown> {
    const webhook = new Webhook(await this.notificationSecret());
    try {
      return webhook.verify(rawBody, {
        'webhook-id': headers['webhook-id'] ?? '',
        'webhook-timestamp': headers['webhook-timestamp'] ?? '',
        'webhook-signature': headers['webhook-signature'] ?? '',
      });
    } catch (err) {
      if (err instanceof WebhookVerificationError) throw new NotificationSignatureError(err.message);
      throw err;
    }
  }

  /**
   * Notifications per connection (POST /v1/provider-notifications/{connection_id}), as a real provider
   * sends them: signed with the sandbox's one secret (the connection's credentials are the acquirer's API
   * keys, not a signing secret), one event per notification, any of the three kinds
   * (sandbox-notifications.ts says the shapes); another type, or a body not of that shape, yields none.
   */
  async parseConnectionNotification(rawBody: string, headers: Readonly<Record<string, string | undefined>>): Promise<ParsedNotification> {
    const parsed = await this.verified(rawBody, {
      'webhook-id': headers['webhook-id'],
      'webhook-timestamp': headers['webhook-timestamp'],
      'webhook-signature': headers['webhook-signature'],
    });
    return { events: sandboxConnectionEvents(parsed, rawBody) };
  }

  async parseNotification(rawBody: string, headers: Partial<WebhookHeaders>): Promise<ChargebackEvent> {
    const parsed = await this.verified(rawBody, headers);
    const body = parsed as {
      id: string;
      type: string;
      data: { payment_id: string; provider_transaction_id: string; amount: number; reason: string; reason_code?: string | null; chargeback_id?: string };
    };
    if (body?.type !== 'CHARGEBACK' || typeof body.data !== 'object') throw new Error(`sandbox provider: unknown notification type ${String(body?.type)}`);
    const reasonCode = body.data.reason_code ?? null;
    return {
      kind: 'CHARGEBACK',
      notificationId: body.id,
      paymentId: body.data.payment_id,
      providerTransactionId: body.data.provider_transaction_id,
      chargebackId: body.data.chargeback_id ?? body.id,
      // A JSON number's shortest form is the text sent for any amount with up to 15 significant digits.
      amount: String(body.data.amount),
      reason: body.data.reason,
      reasonCode,
      reasonDescription: reasonCode ? describeReasonCode(reasonCode) : null,
      raw: parsed as Record<string, unknown>,
      rawBody,
    };
  }

  async simulateChargeback(input: SimulatedChargeback): Promise<{ rawBody: string; headers: WebhookHeaders }> {
    const id = input.notificationId ?? sandboxId('ntf', randomBytes(10));
    const { code } = chargebackReason(input.reason);
    const at = new Date();
    // `amount` is written as the exact decimal text, not through a float.
    const rawBody =
      `{"id":${JSON.stringify(id)},"type":"CHARGEBACK","created_at":${JSON.stringify(at.toISOString())},` +
      `"data":{"payment_id":${JSON.stringify(input.paymentId)},"provider_transaction_id":${JSON.stringify(input.providerTransactionId)},` +
      `"chargeback_id":${JSON.stringify(sandboxId('cb', createHash('sha256').update(id).digest().subarray(0, 6)))},` +
      `"amount":${input.amount},"reason":${JSON.stringify(input.reason)},"reason_code":${JSON.stringify(code)}}}`;
    return { rawBody, headers: await this.sign(id, at, rawBody) };
  }

  /** Standard Webhooks headers for a body, as this provider signs its notifications. */
  async sign(id: string, at: Date, rawBody: string): Promise<WebhookHeaders> {
    const webhook = new Webhook(await this.notificationSecret());
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': webhook.sign(id, at, rawBody),
    };
  }

  /** The sandbox's signing secret (`whsec_…`), generated once and stored sealed; the same for both acquirers. */
  notificationSecret(): Promise<string> {
    return this.shared.notificationSecret();
  }
}

/** The acquirer's status after a sandbox move → the outcome its notification reports. */
const NOTIFIED_OUTCOME: Readonly<Record<string, string>> = { APPROVED: 'PAID', DECLINED: 'DECLINED', EXPIRED: 'EXPIRED', CANCELED: 'CANCELED' };
const REASON: Readonly<Record<string, string>> = {
  PAID: 'The shopper paid',
  DECLINED: 'The provider refused the payment',
  EXPIRED: 'The payment was not made before its deadline',
  CANCELED: 'The shopper cancelled the payment',
};

/** A result for an answer that is not one of the acquirer's operation answers (401, 404, 409, 4xx). */
/**
 * A sandbox acquirer's answer as a result. Both acquirers use the same HTTP statuses for a call they
 * refused (credentials, unknown transaction, a reference closed by a lookup): only a 200's body differs.
 */
export function answerToResult(answer: AcquirerAnswer, toResult: (body: Record<string, unknown>) => ProviderResult): ProviderResult {
  if (answer.status === 200) return toResult(answer.body);
  if (answer.status === 401) return refusedCall('ERROR', PROVIDER_AUTHENTICATION_FAILED, 'The provider refused the connection credentials', answer.body);
  if (answer.status === 404) return refusedCall('DECLINED', 'TRANSACTION_NOT_FOUND', 'The provider has no such transaction', answer.body);
  if (answer.status === 409) return refusedCall('ERROR', 'PROVIDER_REFERENCE_CLOSED', 'The provider refused a reference it had reported unknown', answer.body);
  return refusedCall('ERROR', 'PROVIDER_REQUEST_REJECTED', `The provider rejected the request (HTTP ${answer.status})`, answer.body);
}

export function refusedCall(outcome: 'DECLINED' | 'ERROR', responseCode: string, responseMessage: string, raw: Record<string, unknown>): ProviderResult {
  return {
    outcome,
    providerTransactionId: '',
    responseCode,
    responseMessage,
    iso8583ResponseCode: outcome === 'ERROR' ? '96' : '12',
    iso8583ResponseMessage: outcome === 'ERROR' ? 'System malfunction' : 'Invalid transaction',
    merchantAdviceCode: null,
    merchantAdviceCodeMessage: null,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: raw,
  };
}

/**
 * Credentials refused (401): the merchant's configuration is wrong, not the card. An ERROR result with
 * this code, never a throw, so it is recorded and shown as what it is (the orchestrator decides failover).
 */
export const PROVIDER_AUTHENTICATION_FAILED = 'PROVIDER_AUTHENTICATION_FAILED';
