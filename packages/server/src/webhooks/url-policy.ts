/**
 * Where webhooks may go: `https` to global unicast addresses. Never to a private, link-local, multicast,
 * reserved, translation or otherwise non-global address, checked on registration for literal addresses
 * and again at connection time for every address a name resolves to (so DNS cannot point a delivery
 * inside the network). Sandbox mode adds one exception for local development and the test suite's
 * receivers: loopback (127.0.0.0/8, ::1, localhost and names under it), over plain `http` too.
 *
 * Classification is ipaddr.js's range names (IANA special-purpose registries), not a hand list:
 * - IPv4: only the range `unicast` (everything else ipaddr.js names: private, loopback, linkLocal,
 *   carrierGradeNat, reserved and documentation nets, benchmarking, multicast, broadcast, as112, amt…).
 * - IPv6: IPv4-mapped addresses (::ffff:a.b.c.d, the form a dual-stack socket reports) are judged as the
 *   IPv4 address they carry; otherwise only the range `unicast` inside 2000::/3, the global unicast
 *   space (RFC 4291 §2.4). That refuses every translation form that embeds an IPv4 address —
 *   IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4
 *   2002::/16, Teredo 2001::/32 — as well as site-local fec0::/10, unique-local, link-local, multicast,
 *   documentation and benchmarking ranges, and anything outside the allocated global space.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The address as ipaddr.js parses it (brackets stripped, IPv4-mapped IPv6 unwrapped); undefined if it is not an IP address. */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  // node:net decides what is an address literal (ipaddr.js alone also takes forms such as "0x7f.1").
  const family = isIP(bare);
  if (family === 0) return undefined;
  // ipaddr.js reads a dotted tail as IPv4-mapped whatever precedes it (it takes ::8.8.8.8 for
  // ::ffff:8.8.8.8): the URL parser's canonical hex form first.
  const parsed = ipaddr.parse(family === 6 ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

function isGlobal(a: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (a.kind() === 'ipv4') return a.range() === 'unicast';
  return a.range() === 'unicast' && (a as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** True for an address a delivery must never reach outside sandbox mode. */
export function isNonPublicAddress(address: string): boolean {
  const a = parse(address);
  return a === undefined || !isGlobal(a);
}

export function isLoopbackAddress(address: string): boolean {
  return parse(address)?.range() === 'loopback';
}

/** Whether a delivery may connect to this address. */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  return !isNonPublicAddress(address) || (allowLoopback && isLoopbackAddress(address));
}

/** A localhost name (RFC 6761 §6.3: `localhost` and every name under it always mean loopback). */
const isLoopbackName = (name: string) => name === 'localhost' || name.endsWith('.localhost');

/**
 * Whether a URL's host (`URL.hostname`: brackets and case as the URL parser leaves them) is loopback: a
 * loopback literal or a localhost name. The one rule registration (endpointUrlProblem) and sending
 * (http-sender.ts) both use, so what sandbox mode registers is what it delivers to.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return parse(host) ? isLoopbackAddress(host) : isLoopbackName(host);
}

/** Why this URL cannot be an endpoint, or undefined when it can. `sandbox` admits loopback receivers. */
export function endpointUrlProblem(raw: string, sandbox: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use https';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.hash) return 'must not contain a fragment';
  const host = url.hostname.toLowerCase();
  const literal = parse(host);
  const isLoopback = isLoopbackHost(host);
  if (sandbox && isLoopback) return undefined;
  if (url.protocol === 'http:') return sandbox ? 'must use https (plain http only to 127.0.0.1, ::1 or localhost in sandbox mode)' : 'must use https';
  if (isLoopback || (literal && isNonPublicAddress(host))) return 'must be a public address';
  return undefined;
}

/** A dns lookup that fails when a name resolves to any address a delivery may not reach. */
export function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    // A localhost name resolves as `localhost` itself (RFC 6761: never sent to DNS; the system resolver may not know it).
    dnsLookup(isLoopbackName(hostname.toLowerCase()) ? 'localhost' : hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0 || addresses.some((a) => !addressAllowed(a.address, allowLoopback))) {
        const e = Object.assign(new Error(`${hostname} resolves to a non-public address`), { code: 'ENOTPUBLIC' }) as NodeJS.ErrnoException;
        return callback(e, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
