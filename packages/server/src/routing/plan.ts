/**
 * The contract between routing (which providers a payment tries, in which order) and the payment
 * orchestrator (which tries them). Routing owns the rules (routing/service.ts), the orchestrator only
 * reads a RoutePlan.
 */
import type { ConnectionContext } from '../providers/provider.js';

/** What routing conditions can look at, known before any provider is called. */
export interface PaymentFacts {
  accountId: string;
  /** The payment method type (CARD). */
  paymentMethod: string;
  /** ISO 3166-1 alpha-2 of the payment. */
  country: string;
  /** ISO 4217 of the amount. */
  currency: string;
  /** Decimal string in major units. */
  amount: string;
  /** Card brand as the vault names it (VISA, MASTERCARD…), null when not a card. */
  brand: string | null;
  /** The card's first 8 digits (6 for a shorter number), null when not a card. */
  iin: string | null;
  metadata: readonly { key: string; value: string }[];
}

/** One step of a route: a provider through one of the organization's connections. Steps are the failover order. */
export interface RouteStep {
  index: number;
  providerId: string;
  connectionId: string;
}

/** How a payment was routed: shown as the payment's `routing_rules`, followed by the orchestrator. */
export interface RoutePlan {
  /** The routing that applied; null when the organization has none for the payment method. */
  routingId: string | null;
  /** The condition set that matched, or null for the routing's default route. */
  conditionSet: { sortNumber: number; name: string } | null;
  /** In order; never empty (no usable step is a problem answered before the payment exists). */
  steps: readonly RouteStep[];
}

/** A connection ready for a call: its provider and what the adapter needs (credentials opened). */
export interface UsableConnection {
  connectionId: string;
  providerId: string;
  name: string;
  enabled: boolean;
  context: ConnectionContext;
}
