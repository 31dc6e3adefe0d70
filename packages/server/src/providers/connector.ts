/**
 * The connector kit's contract: what one real provider (Stripe, Adyen, Mercado Pago, …) hands the service.
 * Each connector lives in its own folder under src/providers/<name>/ and exports one `Connector`; the list
 * in ./connectors.ts is the only other place that names it. Its adapter implements PaymentProvider
 * (./provider.ts) through the provider's official Node SDK, pointed at `baseUrl` when the operator (or a
 * test, with a local double) sets one.
 */
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { ChargebackEvent, ConnectionContext, PaymentProvider } from './provider.js';

/** What a provider can do, as GET /v1/providers shows it and routing checks it. */
export interface ProviderCapabilities {
  /** Our payment method types it serves (routing's payment_method), e.g. ['CARD']. */
  paymentMethods: readonly string[];
  /** ISO 4217 codes it settles, or 'ANY'. */
  currencies: readonly string[] | 'ANY';
  /** ISO 3166-1 alpha-2 countries it serves, or 'ANY'. */
  countries: readonly string[] | 'ANY';
  features: {
    /** Authorize now, capture later (capture: false). */
    authorizeCapture: boolean;
    partialCapture: boolean;
    void: boolean;
    partialRefund: boolean;
    multipleRefunds: boolean;
    /** It notifies us (POST /v1/provider-notifications/{connection_id}). */
    webhooks: boolean;
    /** Dispute evidence can be forwarded to it. */
    disputeEvidence: boolean;
    /**
     * It takes evidence after a dispute's first batch (PATCH). False where a dispute's evidence goes once:
     * Stripe submits the dispute, Adyen defends it, and neither takes documents after.
     */
    additionalEvidence: boolean;
  };
}

/**
 * One row of a connector's code table (in the style of Hyperswitch's GSM table): a provider's decline or
 * result code, what the adapter answers for it, and the failover decision that follows. The decision is
 * not decided here: it is what orchestration/failover.ts's failoverDecision makes of the row's outcome,
 * ISO code and advice code (each connector's test checks every row that way, and the docs render the table).
 */
export interface CodeMapping {
  /** The provider's code as it sends it (matched exactly), e.g. Stripe `insufficient_funds`, Adyen refusalReasonCode `5`. */
  providerCode: string;
  outcome: 'DECLINED' | 'ERROR';
  /** Our normalized response code (provider-values.ts RESPONSE_CODES), e.g. INSUFFICIENT_FUNDS, DO_NOT_HONOR. */
  responseCode: string;
  /** The ISO 8583 field 39 equivalent, which failover reads (e.g. 51 insufficient funds, 05 do not honor, 96 system error). */
  iso8583ResponseCode: string;
  merchantAdviceCode: string | null;
  /** HARD_DECLINE stops the route; SOFT_FAILURE fails over (failover.ts). */
  decision: 'HARD_DECLINE' | 'SOFT_FAILURE';
  /** Human message, our words. */
  message: string;
}

export interface ConnectorDeps {
  config: Config;
  log: Logger;
  /** Where the provider's API is reached, when not its public address (config *_API_URL; tests: a local double). */
  baseUrl: string | undefined;
}

/**
 * A verified provider notification, translated. Events are applied by the notifications endpoint
 * (payments domain); a connector only verifies and translates. Each carries the provider's id of the
 * notification (or notification item), the deduplication key: a re-delivery changes nothing twice.
 */
export type ConnectorEvent =
  | ChargebackEvent
  /** A capture or refund the provider accepted earlier was confirmed (or, FAILED, did not go through: the money did not move). */
  | {
      kind: 'FOLLOW_UP_SETTLED';
      notificationId: string;
      operation: 'CAPTURE' | 'REFUND' | 'VOID';
      outcome: 'CONFIRMED' | 'FAILED';
      /** Our reference for the operation (the transaction id we sent as idempotency key / merchant reference), when the provider echoes it. */
      reference: string | null;
      /** The provider's id of the operation itself (refund id, capture psp reference). */
      providerOperationId: string | null;
      /** The provider's id of the original authorization or purchase. */
      providerTransactionId: string | null;
      /** Decimal string in major units, when sent. */
      amount: string | null;
      reason: string | null;
    }
  /**
   * A pending asynchronous payment ended at the provider: the shopper paid (SUCCEEDED), the provider
   * refused it (DECLINED), its deadline passed (EXPIRED) or the shopper cancelled it (CANCELED).
   */
  | {
      kind: 'ASYNC_PAYMENT_SETTLED';
      notificationId: string;
      /** The provider's id of the pending payment. */
      providerTransactionId: string;
      outcome: 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED';
      reason: string | null;
    }
  /**
   * The provider decided a card attempt it had answered without a final outcome (Adyen's AUTHORISATION of a
   * payment answered Received / Pending): approved (SUCCEEDED) or refused (DECLINED). Found by our reference
   * (the attempt's id, sent as the merchant reference) through the notified connection; settled as
   * reconciliation settles a found outcome (payments/provider-notifications/attempts.ts).
   */
  | {
      kind: 'ATTEMPT_SETTLED';
      notificationId: string;
      /** Our attempt's reference (its transaction id). */
      reference: string;
      /** The provider's id of the payment. */
      providerTransactionId: string;
      outcome: 'SUCCEEDED' | 'DECLINED';
      /** The provider's words on a refusal. */
      reason: string | null;
      /** The issuer's authorization code of an approval, when sent. */
      authorizationCode: string | null;
    }
  /** A chargeback's dispute ended at the provider: WON (reversed in the merchant's favour) or LOST. */
  | {
      kind: 'DISPUTE_CLOSED';
      notificationId: string;
      providerTransactionId: string;
      chargebackId: string;
      outcome: 'WON' | 'LOST';
      reason: string | null;
    };

/** What a connector makes of one POST to its notifications address. */
export interface ParsedNotification {
  /** Zero or more events (Adyen batches items; an unknown event type yields none and is acknowledged). */
  events: ConnectorEvent[];
  /** The body the provider expects back on success (Adyen: "[accepted]"); default an empty 200. */
  acknowledgement?: { contentType: string; body: string };
}

/** Notifications of a connection: verified with the connection's own secret before anything is read. */
export interface ConnectionNotifications {
  /**
   * Verifies the signature over the raw body with the connection's credentials, then translates.
   * Throws NotificationSignatureError (./provider.ts) for a missing, wrong or stale signature.
   */
  parseConnectionNotification(
    rawBody: string,
    headers: Readonly<Record<string, string | undefined>>,
    connection: ConnectionContext,
    /** The query parameters the provider appended to the registered URL (Mercado Pago: `data.id`, `type`), when any. */
    query?: Readonly<Record<string, string | undefined>>,
  ): Promise<ParsedNotification>;
}

export interface Connector {
  /** The provider id routing steps and connections name: STRIPE, ADYEN, MERCADO_PAGO. */
  readonly id: string;
  readonly displayName: string;
  readonly capabilities: ProviderCapabilities;
  /** The connector's code table (rendered in docs/providers/<name>.md, tested row by row). */
  readonly codes: readonly CodeMapping[];
  /** The credential fields a connection of this provider holds (spec: the credentials oneOf variant). */
  readonly credentialFields: readonly string[];
  /** Builds the adapter (once per service). */
  create(deps: ConnectorDeps): PaymentProvider & ConnectionNotifications;
}
