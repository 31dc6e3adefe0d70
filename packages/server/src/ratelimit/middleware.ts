import type { Request, RequestHandler, Response } from 'express';
import type { MerchantAuth } from '../context.js';
import { problemBody } from '../http/problems.js';
import { sendProblem } from '../http/send.js';
import { clientAddressKey } from './auth-failures.js';
import type { PublicLimiter } from './public.js';
import type { RateLimitHit, RateLimitStore } from './store.js';

export interface RateLimitOptions {
  /** Requests per window per organization; 0 turns limiting off. */
  limit: number;
  windowSeconds: number;
}

/**
 * After authentication: counts the organization's request and answers 429 RATE_LIMITED with
 * Retry-After past the limit. Every merchant response carries the IETF RateLimit-* headers. A request
 * made with the public key alone is not counted here but by publicRateLimit: the public key is in
 * shoppers' pages, and whoever copies it must not spend the merchant's server-side budget.
 */
export function rateLimit(store: RateLimitStore, options: RateLimitOptions): RequestHandler {
  // Not async: the store answers most requests synchronously (RateLimitStore.hit), and then so does this.
  return (req, res, next) => {
    const merchant = res.locals.merchant as MerchantAuth | undefined;
    if (options.limit <= 0 || !merchant || merchant.publicOnly) return next();
    const decide = ({ count, resetAt }: RateLimitHit) => {
      const reset = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      res.setHeader('RateLimit-Limit', String(options.limit));
      res.setHeader('RateLimit-Remaining', String(Math.max(0, options.limit - count)));
      res.setHeader('RateLimit-Reset', String(reset));
      if (count > options.limit) {
        return sendProblem(
          req,
          res,
          429,
          problemBody('RATE_LIMITED', `Too many requests for this organization; retry after ${reset} second${reset === 1 ? '' : 's'}.`),
          { 'Retry-After': String(reset) },
        );
      }
      return next();
    };
    try {
      const hit = store.hit(`org:${merchant.organizationId}`, options.windowSeconds);
      if (hit instanceof Promise) return void hit.then(decide).catch(next);
      return decide(hit);
    } catch (err) {
      return next(err);
    }
  };
}

/** 429 RATE_LIMITED (problem+json) with Retry-After. */
export function sendRateLimited(req: Request, res: Response, seconds: number, what: string): void {
  sendProblem(req, res, 429, problemBody('RATE_LIMITED', `${what}; retry after ${seconds} second${seconds === 1 ? '' : 's'}.`), { 'Retry-After': String(seconds) });
}

export interface PublicRateLimits {
  perAddress: number;
  perKey: number;
  perSession: number;
}

/**
 * A session's bucket: its path as the route reads it (escapes decoded, case folded, no trailing slash),
 * so one session is one bucket however its path is written (`/sessions/%61bc…` is `/sessions/abc…`).
 */
function sessionBucket(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape: the validator refuses the request after this; its raw path is a bucket of its own.
  }
  return `public-path:${decoded.toLowerCase().replace(/\/+$/, '').slice(0, 200)}`;
}

/**
 * After authentication, for the operations a shopper's browser calls with the public key alone (a
 * checkout session's token, a customer session's enrollment): counted per client address, per public
 * key and per session (the request's path names it), in that order (ratelimit/public.ts).
 */
export function publicRateLimit(limiter: PublicLimiter, limits: PublicRateLimits): RequestHandler {
  const count: RequestHandler = async (req, res, next) => {
    const merchant = res.locals.merchant as MerchantAuth;
    try {
      const keyBucket = `public-key:${merchant.publicKey}`;
      const { wait, counted } = await limiter.count([
        { key: `address:${clientAddressKey(req.ip)}`, limit: limits.perAddress },
        { key: keyBucket, limit: limits.perKey },
        // The path is the operation's with its session id (the validator bounds that id after this).
        { key: sessionBucket(req.path), limit: limits.perSession },
      ]);
      // The RateLimit-* headers tell the public key's budget (the one the merchant's pages share).
      const key = counted.get(keyBucket);
      if (key) {
        res.setHeader('RateLimit-Limit', String(limits.perKey));
        res.setHeader('RateLimit-Remaining', String(Math.max(0, limits.perKey - key.count)));
        res.setHeader('RateLimit-Reset', String(Math.max(1, Math.ceil((key.resetAt - Date.now()) / 1000))));
      }
      if (wait > 0) return sendRateLimited(req, res, wait, 'Too many requests for this public key, session or address');
      return next();
    } catch (err) {
      return next(err);
    }
  };
  // A merchant's request (every one but a shopper's) passes without a promise.
  return (req, res, next) => ((res.locals.merchant as MerchantAuth | undefined)?.publicOnly ? count(req, res, next) : next());
}
