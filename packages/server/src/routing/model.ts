/**
 * The routing shapes as stored (jsonb) and as the API shows them: the same snake_case objects, so the
 * stored routing is the response. Conditions are closed and typed (docs/guides/routing.md#conditions).
 */

export interface StoredStep {
  index: number;
  provider_id: string;
  connection_id: string;
}

export interface StoredRoute {
  steps: StoredStep[];
}

export type ListOperator = 'IN' | 'NOT_IN';

/** One condition; the conditions of a set AND together. */
export type RoutingCondition =
  | { type: 'COUNTRY' | 'CURRENCY' | 'CARD_BRAND'; operator: ListOperator; values: string[] }
  | { type: 'IIN'; operator: 'IN_RANGE'; from: string; to: string }
  | { type: 'IIN'; operator: 'STARTS_WITH'; values: string[] }
  | { type: 'AMOUNT'; operator: 'BETWEEN'; min: number; max: number }
  | { type: 'METADATA'; key: string; operator: 'EQUALS' | 'IN'; values: string[] };

export interface StoredConditionSet {
  sort_number: number;
  name: string;
  conditions: RoutingCondition[];
  route: StoredRoute;
}

/** The payment methods routing covers: cards, and the asynchronous methods (payments/async-methods/). */
export const ROUTABLE_PAYMENT_METHODS = ['CARD', 'PIX', 'BANK_TRANSFER', 'OXXO', 'BOLETO', 'PAYPAL', 'MERCADO_PAGO_WALLET', 'CASH', 'APPLE_PAY', 'GOOGLE_PAY'] as const;

/** Limits (also in the spec): steps per route, condition sets, conditions per set, values per condition. */
export const LIMITS = { steps: 10, conditionSets: 50, conditions: 10, values: 100 } as const;
