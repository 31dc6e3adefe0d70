/**
 * createApp: the Express application, wired in the order a request travels:
 * request id → security headers → access log → which operation → credentials → rate limit → JSON body (per-route
 * limit) → OpenAPI validation → handler (with idempotency) → reply; every error → problem+json.
 */
import express from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import type { AppDeps, Handlers } from './context.js';
import { accessLog } from './http/access-log.js';
import { dispatch } from './http/dispatch.js';
import { errorHandler } from './http/errors.js';
import { problemBody } from './http/problems.js';
import { requestId } from './http/request-id.js';
import { rejectNulCharacters } from './http/nul-characters.js';
import { parseJsonBody, resolveOperation } from './http/routing.js';
import { sendProblem } from './http/send.js';
import { basePath, indexOperations, loadSpec } from './http/spec.js';
import { openApiValidator } from './http/validator.js';
import { handlers as defaultHandlers } from './handlers.js';
import { rateLimit } from './ratelimit/middleware.js';
import { DatabaseRateLimitStore, MemoryRateLimitStore } from './ratelimit/store.js';
import { authenticate } from './tenancy/authenticate.js';
import { brandIconsRouter } from './vault/brand-icons.js';
import { sandboxPagesRouter } from './vault/sandbox-pages.js';

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
  app.set('trust proxy', false);

  app.use(requestId);
  app.use(
    helmet({
      // The API answers JSON; only /docs renders HTML (Swagger UI's own files and inline styles).
      contentSecurityPolicy: { directives: { 'style-src': ["'self'", "'unsafe-inline'"], 'img-src': ["'self'", 'data:'] } },
    }),
  );
  app.use(accessLog(deps.log));

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
  app.get('/openapi.json', (_req, res) => {
    res.json(spec);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(loadSpec() as never, { customSiteTitle: 'payorch API reference' }));

  const limiterStore = deps.config.rateLimitStore === 'database' ? new DatabaseRateLimitStore(deps.db, deps.config.rateLimitPerMinute) : new MemoryRateLimitStore();
  const limiter = rateLimit(limiterStore, { limit: deps.config.rateLimitPerMinute, windowSeconds: 60 });
  // Not in the API contract (brand images, the sandbox provider's HTML page): before the spec router's 404.
  app.use(brandIconsRouter(), sandboxPagesRouter(deps));
  app.use(base, resolveOperation(ops), authenticate(deps), limiter, parseJsonBody(), rejectNulCharacters);
  app.use(openApiValidator(deps.config.validateResponses));
  app.use(base, dispatchOperation);

  app.use((req, res) => sendProblem(req, res, 404, problemBody('NOT_FOUND', `No route ${req.method} ${req.path}.`)));
  app.use(errorHandler(deps.log));
  return app;
}
