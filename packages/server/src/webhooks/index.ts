/**
 * The webhooks domain's public surface for other domains: record an event inside your transaction.
 *
 *   await recordEvent(tx, { organizationId, accountId, type: 'payment.succeeded', data: { payment }, resourceId: payment.id });
 */
export { recordEvent, type NewEvent } from './events.js';
export { PRE_ROUTING_RULES } from './event-upgrades.js';
export { EVENT_TYPES, type EventType, type EventData, type EventEnvelope } from './event-types.js';
export { verifySignedRequest, signatureHeaders, type Verification, type VerifyOptions } from './signing.js';
