/**
 * Yuno's webhook triggers ↔ payorch event types (docs/guides/yuno-compatibility.md, "Webhook management").
 * A trigger maps to the events that announce what it names; triggers of things payorch does not have
 * (reports, subscriptions, onboarding, pre-chargebacks, verifications) map to nothing: they are kept
 * as given and reported in `unsupported_triggers`.
 */
import type { Schemas } from '@payorch/types';

type Subscription = Schemas['WebhookEventSubscription'];
type CreateInput = Schemas['YunoWebhookCreateRequest'];

/** The five trigger lists of Yuno's webhook configuration, in the order Yuno shows them. */
export const TRIGGER_LISTS = ['enrollment_triggers', 'payment_triggers', 'report_triggers', 'subscription_triggers', 'onboarding_triggers'] as const;
export type TriggerList = (typeof TRIGGER_LISTS)[number];

export type YunoTriggers = { [L in TriggerList]: NonNullable<CreateInput[L]> } & { renewal_days: number | null };

type TriggerOf<L extends TriggerList> = NonNullable<CreateInput[L]>[number];

/** Every trigger of every list with its payorch events (empty: no payorch event). */
export const TRIGGER_EVENTS: { [L in TriggerList]: Record<TriggerOf<L>, readonly Subscription[]> } = {
  enrollment_triggers: {
    ENROLL: ['enrollment.enrolled', 'enrollment.declined'],
    UNENROLL: ['enrollment.unenrolled'],
  },
  payment_triggers: {
    AUTHORIZE: ['payment.authorized', 'payment.declined', 'payment.failed'],
    // An asynchronous purchase (PIX, vouchers, wallets) waits for the shopper, then is paid or expires.
    PURCHASE: ['payment.succeeded', 'payment.declined', 'payment.failed', 'payment.pending', 'payment.expired'],
    CAPTURE: ['payment.captured', 'payment.operation.failed'],
    CANCEL: ['payment.canceled', 'payment.operation.failed'],
    REFUND: ['payment.refunded', 'payment.operation.failed'],
    CHARGEBACK: ['payment.chargeback', 'payment.dispute.submitted', 'payment.dispute.won', 'payment.dispute.lost'],
    PRECHARGEBACK: [],
    VERIFY: [],
  },
  report_triggers: { CREATE: [], UPDATE: [] },
  subscription_triggers: { ACTIVE: [], CANCEL: [], CLOSE_TO_RENEWAL: [], COMPLETE: [], CREATE: [], PAUSE: [], RESUME: [] },
  onboarding_triggers: {
    BLOCKED: [], CANCELLED: [], CREATED: [], DECLINED: [], ERROR: [], EXPIRED: [], INACTIVE: [], PENDING: [], SUCCEEDED: [], TRANSFERRED: [], UNBLOCKED: [],
  },
};

const eventsOf = (list: TriggerList, trigger: string): readonly Subscription[] =>
  (TRIGGER_EVENTS[list] as Record<string, readonly Subscription[]>)[trigger] ?? [];

/** The payorch events the triggers subscribe to, in the order of the event catalogue of the lists. */
export function eventsForTriggers(t: YunoTriggers): Subscription[] {
  const out = new Set<Subscription>();
  for (const list of TRIGGER_LISTS) for (const trigger of t[list]) for (const e of eventsOf(list, trigger)) out.add(e);
  return [...out];
}

/** Triggers kept without a payorch event, as `<list>:<trigger>`. */
export function unsupportedTriggers(t: YunoTriggers): string[] {
  const out: string[] = [];
  for (const list of TRIGGER_LISTS) for (const trigger of t[list]) if (eventsOf(list, trigger).length === 0) out.push(`${list}:${trigger}`);
  return out;
}

/**
 * The trigger lists shown for an endpoint last subscribed through /webhook-endpoints: a trigger is listed
 * when the endpoint receives one of its events (`*` receives them all).
 */
export function triggersForEvents(events: readonly string[]): YunoTriggers {
  const all = events.includes('*');
  const derive = <L extends TriggerList>(list: L) =>
    (Object.keys(TRIGGER_EVENTS[list]) as TriggerOf<L>[]).filter((trigger) => eventsOf(list, trigger).some((e) => all || events.includes(e)));
  return {
    enrollment_triggers: derive('enrollment_triggers'),
    payment_triggers: derive('payment_triggers'),
    report_triggers: [],
    subscription_triggers: [],
    onboarding_triggers: [],
    renewal_days: null,
  } as YunoTriggers;
}

/** The stored lists (yuno_triggers column), if they are well formed. */
export function storedTriggers(value: unknown): YunoTriggers | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (!TRIGGER_LISTS.every((l) => Array.isArray(v[l]))) return null;
  return { ...(v as YunoTriggers), renewal_days: typeof v.renewal_days === 'number' ? v.renewal_days : null };
}
