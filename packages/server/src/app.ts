/**
 * createApp: the Express application, wired in the order a request travels:
 * request id → security headers → access log and metrics → which operation → credentials → rate limit → JSON body (per-route
 * limit) → NUL and depth check → shape bounds (http/body-bounds.ts) → OpenAPI validation → handler (with idempotency) → reply; every error → problem+json.
 */
import express from 'express';
import helmet from 'helmet';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { AppDeps, Handlers } from './context.js';
import { dispatch } from './dispatch.js';
import { accessLog } from './http/access-log.js';
import { lenientInput } from './http/lenient-input.js';
import { boundBodyShape } from './http/body-bounds.js';
import { errorHandler } from './http/errors.js';
import { createFieldMessages } from './http/field-messages.js';
import { problemBody } from './http/problems.js';
import { requestId } from './http/request-id.js';
import { parseJsonBody, resolveOperation } from './http/routing.js';
import { sendProblem } from './http/send.js';
import { rejectUnstorableStrings } from './http/storable-strings.js';
import { basePath, indexOperations, loadSpec } from './http/spec.js';
import { openApiValidator } from './http/validator.js';
import { handlers as defaultHandlers } from './handlers.js';
import { AuthFailureLimiter } from './ratelimit/auth-failures.js';
import { publicRateLimit, rateLimit } from './ratelimit/middleware.js';
import { PublicLimiter } from './ratelimit/public.js';
import { DatabaseRateLimitStore, MemoryRateLimitStore } from './ratelimit/store.js';
import { authenticate } from './tenancy/authenticate.js';
import { metricsEndpoint } from './tenancy/metrics-endpoint.js';
import { brandIconsRouter } from './vault/brand-icons.js';
import { faviconRouter } from './http/favicon.js';
import { sandboxPagesRouter } from './vault/sandbox-pages.js';
import { walletPageRouter } from './payments/async-methods/wallet-page.js';
import { checkoutSources } from './hosted/checkout-sources.js';
import { hostedPagesRouter } from './hosted/router.js';

/** packages/server/dist/docs, from src/ (tests) and from dist/ alike. */
const DOCS_SITE = fileURLToPath(new URL('../dist/docs', import.meta.url));

export interface CreateAppOptions extends AppDeps {
  /** Replace the handler map (tests of the platform itself). */
  handlers?: Handlers;
}

export function createApp(options: CreateAppOptions): express.Express {
  const { handlers = defaultHandlers, ...deps } = options;
  const spec = loadSpec();
  const ops = indexOperations(spec);
  const base = basePath(spec);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Which client address counts (failed-authentication limit, access log) behind a proxy: TRUST_PROXY.
  app.set('trust proxy', deps.config.trustProxy);

  app.use(requestId);
  app.use(
    helmet({
      // The API answers JSON; only /docs renders HTML: Redoc injects its styles and runs its search index
      // in a worker made from a blob. Everything else comes from this origin.
      contentSecurityPolicy: {
        directives: { 'style-src': ["'self'", "'unsafe-inline'"], 'img-src': ["'self'", 'data:'], 'worker-src': ["'self'", 'blob:'] },
      },
    }),
  );
  app.use(accessLog(deps.log, deps.services.metrics));

  // The probes are also served outside the version prefix (orchestrators expect /healthz, /readyz).
  const dispatchOperation = dispatch(handlers, deps);
  const healthzRoot = (operationId: 'getHealth' | 'getReadiness'): express.RequestHandler => {
    const operation = ops.find((o) => o.operationId === operationId);
    return (req, res, next) => {
      res.locals.operation = operation;
      dispatchOperation(req, res, next);
    };
  };
  app.get('/healthz', healthzRoot('getHealth'));
  app.get('/readyz', healthzRoot('getReadiness'));
  // Serialized once: anyone may ask for it, as often as they like (~800 KB), so a request must not cost a
  // serialization; a client that has it revalidates with its ETag for a 304.
  const specBody = Buffer.from(JSON.stringify(spec));
  const specTag = `"${createHash('sha256').update(specBody).digest('hex')}"`;
  app.get('/openapi.json', (req, res) => {
    res.set({ ETag: specTag, 'Cache-Control': 'public, max-age=300' });
    if (req.get('if-none-match') === specTag) return res.status(304).end();
    return res.type('application/json').send(specBody);
  });
  // The documentation site (guides + reference), built with the server by tools/docs.mjs.
  app.use('/docs', express.static(DOCS_SITE, { index: 'index.html', fallthrough: true }));

  const storeFor = (limit: number) => (deps.config.rateLimitStore === 'database' ? new DatabaseRateLimitStore(deps.db, limit) : new MemoryRateLimitStore());
  const limiter = rateLimit(storeFor(deps.config.rateLimitPerMinute), { limit: deps.config.rateLimitPerMinute, windowSeconds: 60 });
  // The unauthenticated checkout surface: hosted pages and public-key routes (ratelimit/public.ts).
  const publicLimiter = new PublicLimiter(storeFor);
  const publicLimits = publicRateLimit(publicLimiter, {
    perAddress: deps.config.hostedRateLimitPerAddress,
    perKey: deps.config.publicKeyRateLimitPerMinute,
    perSession: deps.config.checkoutSessionRateLimitPerMinute,
  });
  const authFailures = new AuthFailureLimiter(storeFor(deps.config.authFailuresPerMinute), deps.config.authFailuresPerMinute);
  // The operator's scrape (outside the API and its spec; METRICS_TOKEN: see tenancy/metrics-endpoint.ts).
  app.get('/metrics', metricsEndpoint(deps, authFailures));
  // Not in the API contract (brand images, the sandbox provider's HTML page, the hosted checkout pages): before the spec router's 404.
  // The sandbox page exists in sandbox mode only: elsewhere it would approve enrollments with no bank check.
  app.use(faviconRouter(DOCS_SITE));
  app.use(brandIconsRouter());
  if (deps.config.sandbox) app.use(sandboxPagesRouter(deps), walletPageRouter(deps));
  // The hosted card form and payment link pages (/checkout/…, each with its own CSP: hosted/origins.ts).
  app.use(hostedPagesRouter(deps, checkoutSources, publicLimiter));
  const bodyBounds = boundBodyShape(spec, ops);
  app.use(base, resolveOperation(ops), authenticate(deps, authFailures), limiter, publicLimits, parseJsonBody(bodyBounds.checkRaw), rejectUnstorableStrings, bodyBounds.beforeValidation);
  app.use(openApiValidator(deps.config.validateResponses));
  app.use(base, bodyBounds.afterValidation, lenientInput(spec, ops), dispatchOperation);

  app.use((req, res) => sendProblem(req, res, 404, problemBody('NOT_FOUND', `No route ${req.method} ${req.path}.`)));
  app.use(errorHandler(deps.log, createFieldMessages(loadSpec())));
  return app;
}
