/**
 * Failed authentications are limited per client address: past AUTH_FAILURES_PER_MINUTE (default 60) an
 * address gets 429 RATE_LIMITED with Retry-After for the rest of the window, whatever key it sends
 * (otherwise a 429 for wrong secrets and a 200 for the right one would still let it guess), and costs
 * no database lookup meanwhile. The count lives in the same store as the per-organization limit (the
 * database with several instances); the "blocked until" is remembered per instance.
 *
 * The address is Express's req.ip, so which one counts behind a proxy is TRUST_PROXY. An IPv6 client
 * is counted by its /64, the block one subscriber gets; an IPv4-mapped IPv6 address as its IPv4 address.
 */
import type { Request, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { problemBody } from '../http/problems.js';
import { sendProblem } from '../http/send.js';
import type { RateLimitStore } from './store.js';

/** The 429 an address gets while its failed authentications keep it blocked (every credential check sends it). */
export function sendAuthRateLimited(req: Request, res: Response, seconds: number): void {
  sendProblem(req, res, 429, problemBody('RATE_LIMITED', `Too many failed authentications from this address; retry after ${seconds} second${seconds === 1 ? '' : 's'}.`), {
    'Retry-After': String(seconds),
  });
}

export function clientAddressKey(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? '';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

export class AuthFailureLimiter {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly store: RateLimitStore,
    /** Failures per window per address; 0 turns limiting off. */
    private readonly limit: number,
    private readonly windowSeconds = 60,
    private readonly maxBlocked = 10_000,
  ) {}

  /** Seconds the address (its key, computed only when an address is blocked) must still wait before it may authenticate again (0: it may). */
  waitFor(address: () => string): number {
    if (this.blockedUntil.size === 0) return 0;
    const key = address();
    const until = this.blockedUntil.get(key);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.blockedUntil.delete(key);
    return 0;
  }

  /** Counts a failure; returns the seconds to wait when the address is now over its limit, else 0. */
  async failed(address: string): Promise<number> {
    if (this.limit <= 0) return 0;
    const { count, resetAt } = await this.store.hit(`auth-failures:${address}`, this.windowSeconds);
    if (count <= this.limit) return 0;
    // Full: the block first set goes (blocks end in about the order they were set; no scan per block).
    if (this.blockedUntil.size >= this.maxBlocked) this.blockedUntil.delete(this.blockedUntil.keys().next().value!);
    this.blockedUntil.set(address, resetAt);
    return Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  }
}
