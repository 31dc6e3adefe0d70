/**
 * The event catalogue: every event type a merchant can subscribe to, the resource kind it is about
 * (the envelope's `type`) and the shape of its `data`, all taken from the spec's `webhooks` section.
 */
import type { Schemas } from '@payorch/types';

export const EVENT_TYPES = [
  'enrollment.enrolled',
  'enrollment.declined',
  'enrollment.unenrolled',
  'payment.succeeded',
  'payment.declined',
  'payment.failed',
  'payment.chargeback',
  'payment.dispute.submitted',
  'payment.dispute.won',
  'payment.dispute.lost',
  'payment.authorized',
  'payment.captured',
  'payment.canceled',
  'payment.refunded',
  'payment.operation.failed',
  'payment.pending',
  'payment.expired',
  'payment_link.paid',
] as const satisfies readonly Schemas['WebhookEventType'][];

export type EventType = (typeof EVENT_TYPES)[number];

/** Every event envelope of the spec, by its `type_event`. */
export interface EventEnvelopes {
  'enrollment.enrolled': Schemas['EventEnrollmentEnrolled'];
  'enrollment.declined': Schemas['EventEnrollmentDeclined'];
  'enrollment.unenrolled': Schemas['EventEnrollmentUnenrolled'];
  'payment.succeeded': Schemas['EventPaymentSucceeded'];
  'payment.declined': Schemas['EventPaymentDeclined'];
  'payment.failed': Schemas['EventPaymentFailed'];
  'payment.chargeback': Schemas['EventPaymentChargeback'];
  'payment.dispute.submitted': Schemas['EventPaymentDisputeSubmitted'];
  'payment.dispute.won': Schemas['EventPaymentDisputeWon'];
  'payment.dispute.lost': Schemas['EventPaymentDisputeLost'];
  'payment.authorized': Schemas['EventPaymentAuthorized'];
  'payment.captured': Schemas['EventPaymentCaptured'];
  'payment.canceled': Schemas['EventPaymentCanceled'];
  'payment.refunded': Schemas['EventPaymentRefunded'];
  'payment.operation.failed': Schemas['EventPaymentOperationFailed'];
  'payment.pending': Schemas['EventPaymentPending'];
  'payment.expired': Schemas['EventPaymentExpired'];
  'payment_link.paid': Schemas['EventPaymentLinkPaid'];
}

/** Any event envelope as POSTed to an endpoint. */
export type EventEnvelope = EventEnvelopes[EventType];

/** The `data` of an event of type T. */
export type EventData<T extends EventType> = EventEnvelopes[T]['data'];

/** The envelope's `type`: the kind of resource (`payment`, `enrollment`); `type_event` is the event name. */
export function resourceKind<T extends EventType>(type: T): EventEnvelopes[T]['type'] {
  return type.slice(0, type.indexOf('.')) as EventEnvelopes[T]['type'];
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The envelope's `version`: bump when the envelope or a data shape changes incompatibly. */
export const ENVELOPE_VERSION = 1;
