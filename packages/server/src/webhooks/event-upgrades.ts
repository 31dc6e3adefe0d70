/**
 * Event data as today's contract describes it, whatever release recorded it. An event's `data` is stored
 * as it was when the change committed and stays readable (GET /v1/events) and deliverable for
 * EVENT_RETENTION_DAYS, so for that long after an upgrade the log holds data of the previous release. A
 * field a release makes required in event data is filled here, on the way out, with the value a payment
 * of that older release has (the same value the payments' mapper gives a stored payment without it).
 */
import type { Schemas } from '@payorch/types';

/**
 * `routing_rules` of a payment made before routing existed (2.3.0 put it on every payment and its
 * events): it went to the one configured provider. payments/mapper.ts answers it for such a payment too.
 */
export const PRE_ROUTING_RULES: Schemas['PaymentRoutingRules'] = { smart_routing: false, monitors: false, condition: { id: 0, name: null, description: null } };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored data with what later releases require filled in; the stored object itself is left alone. */
export function upgradeEventData(data: unknown): unknown {
  if (!isObject(data) || !isObject(data.payment) || 'routing_rules' in data.payment) return data;
  return { ...data, payment: { ...data.payment, routing_rules: PRE_ROUTING_RULES } };
}
