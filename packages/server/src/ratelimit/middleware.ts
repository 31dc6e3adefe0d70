import type { RequestHandler } from 'express';
import type { MerchantAuth } from '../context.js';
import { problemBody } from '../http/problems.js';
import { sendProblem } from '../http/send.js';
import type { RateLimitStore } from './store.js';

export interface RateLimitOptions {
  /** Requests per window per organization; 0 turns limiting off. */
  limit: number;
  windowSeconds: number;
}

/**
 * After authentication: counts the organization's request and answers 429 RATE_LIMITED with
 * Retry-After past the limit. Every merchant response carries the IETF RateLimit-* headers.
 */
export function rateLimit(store: RateLimitStore, options: RateLimitOptions): RequestHandler {
  return async (req, res, next) => {
    const merchant = res.locals.merchant as MerchantAuth | undefined;
    if (options.limit <= 0 || !merchant) return next();
    try {
      const { count, resetAt } = await store.hit(`org:${merchant.organizationId}`, options.windowSeconds);
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
    } catch (err) {
      return next(err);
    }
  };
}
