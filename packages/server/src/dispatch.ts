/**
 * Calls the operation's handler with a typed request built from the validated HTTP request, through
 * the idempotency mechanism when the spec declares X-Idempotency-Key, and sends the reply.
 *
 * Part of the composition root, not of src/http: it joins the handler map and its context (context.ts),
 * idempotency and the vault's keyed fingerprint to http's request and reply, and idempotency answers with
 * http's problems, so http imports nothing of idempotency.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppDeps, Handlers, MerchantAuth, RequestContext } from './context.js';
import { ProblemError } from './http/problems.js';
import { requestIdOf, sendReply, type Reply } from './http/send.js';
import { pathParamsOf, type OperationInfo } from './http/spec.js';
import { CLAIMED_ON_BIND, fingerprintOf, idempotencyModeOf, NO_BINDING, runDeferred, runIdempotent } from './idempotency/idempotency.js';
import { linkBase } from './platform/config.js';
import { inRequestScope } from './platform/request-scope.js';

type AnyHandler = (request: unknown, ctx: RequestContext) => Promise<Reply>;

export function dispatch(handlers: Handlers, deps: AppDeps): RequestHandler {
  return (req: Request, res: Response, next) => {
    const op = res.locals.operation as OperationInfo;
    let headers: Record<string, string | undefined> | undefined;
    const request = {
      // Every segment decodes: one that does not was refused before validation (storable-strings.ts).
      params: pathParamsOf(op, req.path) as Record<string, string>,
      query: { ...(req.query as Record<string, unknown>) },
      // Made when a handler reads them: most read none, and a request's ~10 headers are an object per request.
      get headers() {
        return (headers ??= Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v])));
      },
      body: req.body,
      // The exact body bytes of a signed request (see parseJsonBody), for signature checks.
      rawBody: (req as Request & { rawBody?: Buffer }).rawBody,
    };
    const requestId = requestIdOf(res);
    let log: RequestContext['log'] | undefined;
    const afterCommit: (() => Promise<void>)[] = [];
    const ctx: RequestContext = {
      db: deps.db,
      deps,
      // Created on first use: most requests log nothing but their access line.
      get log() {
        return (log ??= deps.log.child({ reqId: requestId }));
      },
      requestId,
      idempotency: NO_BINDING,
      merchant: res.locals.merchant as MerchantAuth,
      // Read when a handler builds a link (an app made without startServer has none to give).
      get baseUrl() {
        return linkBase(deps.config);
      },
      afterCommit: (task) => void afterCommit.push(task),
    };
    // The request's scope: its organization bounds its database work (db/organization-gate.ts), and its
    // provider calls are noted (platform/request-scope.ts).
    return inRequestScope(ctx.merchant?.organizationId ?? null, () => run(op, request, ctx, afterCommit, req, res, next));
  };

  async function run(
    op: OperationInfo,
    request: unknown,
    ctx: RequestContext,
    afterCommit: readonly (() => Promise<void>)[],
    req: Request,
    res: Response,
    next: NextFunction,
  ): Promise<void> {
    const handler = handlers[op.operationId] as unknown as AnyHandler;
    try {
      let reply: Reply;
      // An optional key (unenroll, idempotent by nature) that was not sent: the operation just runs.
      if (op.idempotent && ctx.merchant && req.get('x-idempotency-key') !== undefined) {
        const idempotent = {
          organizationId: ctx.merchant.organizationId,
          key: req.get('x-idempotency-key')!,
          operationId: op.operationId,
          fingerprint: fingerprintOf(req.method, req.path, req.body, (data) =>
            deps.services.vault.fingerprint(ctx.merchant.organizationId, `idempotency:${data}`),
          ),
        };
        const outcome =
          idempotencyModeOf(op.operationId) === 'deferred'
            ? await runDeferred(deps.db, idempotent, deps.services.idempotencyRecoverers, (binding) => handler(request, { ...ctx, idempotency: binding }), {
                claimOnBind: CLAIMED_ON_BIND.has(op.operationId),
              })
            : await runIdempotent(deps.db, idempotent, (tx) => handler(request, { ...ctx, db: tx }));
        if ('notStored' in outcome && outcome.notStored !== undefined) {
          ctx.log.warn({ err: outcome.notStored, operationId: op.operationId }, 'idempotency: the reply was answered but not stored; a retry recovers it');
        }
        reply = outcome.replayed ? { ...outcome.reply, headers: { ...outcome.reply.headers, 'Idempotent-Replayed': 'true' } } : outcome.reply;
      } else {
        try {
          reply = await handler(request, ctx);
        } catch (err) {
          if (!(err instanceof ProblemError)) throw err;
          reply = err.reply as Reply;
        }
      }
      // The operation's transaction (if any) has committed by now.
      for (const task of afterCommit) await task();
      sendReply(req, res, reply, { reuseJson: !deps.config.validateResponses });
    } catch (err) {
      next(err);
    }
  }
}
