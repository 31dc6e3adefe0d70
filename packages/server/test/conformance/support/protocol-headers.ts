/**
 * The response headers a spec does not declare per response, and why. Every other header the service
 * sends must be declared on the response that carries it (the conformance check fails otherwise); the
 * spec's `info.description` names these (checks.test.ts holds the two together).
 */

/**
 * HTTP's own: OpenAPI describes `Content-Type` through each response's media types (and says a
 * `Content-Type` header definition is ignored), and the rest frame the message on the connection
 * (RFC 9110 §6.6.1, §8.6; RFC 9112 §6.1, §9.6).
 */
export const TRANSPORT_HEADERS = ['content-type', 'content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive'] as const;

/**
 * Security headers helmet sets alike on every response of the service (API, /docs and probes): they
 * tell browsers how to treat the response and carry nothing about the operation's result.
 */
export const SECURITY_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
] as const;

const UNDECLARED = new Set<string>([...TRANSPORT_HEADERS, ...SECURITY_HEADERS]);

/** True for a header (any case) a response may carry without declaring it. */
export function isProtocolHeader(name: string): boolean {
  return UNDECLARED.has(name.toLowerCase());
}
