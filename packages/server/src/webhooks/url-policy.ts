/**
 * Where webhooks may go: `https` to public addresses. Never to a private, link-local, multicast or
 * otherwise non-public address, checked on registration for literal addresses and again at connection
 * time for every address a name resolves to (so DNS cannot point a delivery inside the network).
 * Sandbox mode adds one exception for local development and the test suite's receivers: loopback
 * (127.0.0.0/8, ::1, localhost), over plain `http` too.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An address as family + text, IPv4-mapped IPv6 unwrapped; undefined if it is not an IP address. */
function parse(address: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { address: mapped[1]!, type: 'ipv4' };
  const family = isIP(bare);
  return family === 0 ? undefined : { address: bare, type: family === 4 ? 'ipv4' : 'ipv6' };
}

/** True for an address a delivery must never reach outside sandbox mode. */
export function isNonPublicAddress(address: string): boolean {
  const a = parse(address);
  return a === undefined || blocked.check(a.address, a.type);
}

export function isLoopbackAddress(address: string): boolean {
  const a = parse(address);
  return a !== undefined && loopback.check(a.address, a.type);
}

/** Whether a delivery may connect to this address. */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  return !isNonPublicAddress(address) || (allowLoopback && isLoopbackAddress(address));
}

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

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
  const isLoopback = literal ? isLoopbackAddress(host) : isLoopbackName(host);
  if (sandbox && isLoopback) return undefined;
  if (url.protocol === 'http:') return sandbox ? 'must use https (plain http only to 127.0.0.1, ::1 or localhost in sandbox mode)' : 'must use https';
  if (isLoopback || (literal && isNonPublicAddress(host))) return 'must be a public address';
  return undefined;
}

/** A dns lookup that fails when a name resolves to any address a delivery may not reach. */
export function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
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
