/**
 * The provider (acquirer) adapter interface. Domain code talks to providers only through this; the
 * sandbox provider (./sandbox) is the one implementation. A provider answers declines as results,
 * never as exceptions: a throw means the provider could not be reached (→ 5xx or a retry).
 */

/** Card data handed to a provider. Lives only in memory for the duration of one call. */
export interface ProviderCard {
  number: string;
  holderName: string | null;
  expirationMonth: number;
  /** Two digits, as the API takes it. */
  expirationYear: number;
  securityCode: string | null;
  brand: string;
}

export type ProviderOutcome = 'SUCCEEDED' | 'DECLINED' | 'ERROR';

export interface ProviderResult {
  outcome: ProviderOutcome;
  providerTransactionId: string;
  /** Our normalized code, e.g. SUCCEEDED, INSUFFICIENT_FUNDS, DO_NOT_HONOR, REPORTED_STOLEN. */
  responseCode: string;
  responseMessage: string;
  iso8583ResponseCode: string;
  iso8583ResponseMessage: string;
  merchantAdviceCode: string | null;
  merchantAdviceCodeMessage: string | null;
  authorizationCode: string | null;
  retrievalReferenceNumber: string | null;
  /** The provider's answer exactly as received (stored for raw_response=true). Never holds a PAN. */
  rawResponse: Record<string, unknown>;
  /** Sandbox only: this card receives a chargeback right after a successful purchase. */
  chargebackFollows?: boolean;
}

export interface PaymentProvider {
  readonly id: string;
  /** A zero-amount verification of a card (enrollment `verify`). */
  verify(input: { card: ProviderCard; currency: string | null; reference: string }): Promise<ProviderResult>;
  /** An authorization with capture. `amount` is a decimal string in major units. */
  purchase(input: { card: ProviderCard; amount: string; currency: string; reference: string; description: string }): Promise<ProviderResult>;
}
