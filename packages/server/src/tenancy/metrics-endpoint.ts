/**
 * GET /metrics: the Prometheus exposition, for the operator's scraper. Not part of the merchant API (not in
 * the spec, like /openapi.json and /docs): its format is Prometheus's, and no merchant credential opens it.
 * It exists only when METRICS_TOKEN is set, and then answers only `Authorization: Bearer <METRICS_TOKEN>`
 * (what Prometheus sends with `authorization: {credentials: …}`): a token of its own, so the scraper holds a
 * read-only secret rather than the admin key that creates organizations and API keys. Wrong tokens count
 * against the client address like any failed authentication (AUTH_FAILURES_PER_MINUTE).
 *
 * Beside authenticate.ts (the admin key is checked the same way, against the same failure limit): the
 * endpoint is an operator credential in front of the exposition, and http, which the failure limit and
 * authentication answer through, imports neither of them.
 */
import type { RequestHandler } from 'express';
import type { AppDeps } from '../context.js';
import { problemBody } from '../http/problems.js';
import { sendProblem } from '../http/send.js';
import { clientAddressKey, sendAuthRateLimited, type AuthFailureLimiter } from '../ratelimit/auth-failures.js';
import { constantTimeEquals } from './credentials.js';

export function metricsEndpoint(deps: AppDeps, failures: AuthFailureLimiter): RequestHandler {
  return async (req, res, next) => {
    res.locals.metricsOperation = 'metrics';
    const token = deps.config.metricsToken;
    if (!token) return sendProblem(req, res, 404, problemBody('NOT_FOUND', `No route ${req.method} ${req.path}.`));
    try {
      const address = () => clientAddressKey(req.ip);
      const limited = (seconds: number) => sendAuthRateLimited(req, res, seconds);
      const wait = failures.waitFor(address);
      if (wait > 0) return limited(wait);
      const given = /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '')?.[1];
      if (!given || !constantTimeEquals(given, token)) {
        const blocked = await failures.failed(address());
        if (blocked > 0) return limited(blocked);
        return sendProblem(req, res, 401, problemBody('INVALID_CREDENTIALS', 'Send Authorization: Bearer with the METRICS_TOKEN.'), {
          'WWW-Authenticate': 'Bearer realm="metrics"',
        });
      }
      const { contentType, body } = await deps.services.metrics.exposition();
      res.status(200).set('Cache-Control', 'no-store').type(contentType).send(body);
    } catch (err) {
      next(err);
    }
  };
}
