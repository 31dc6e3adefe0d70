/**
 * One JSON line per request once its response is done (or the client went away): the request id, the
 * method, the path without its query string, the status and the time. Never bodies or headers. The same
 * moment counts the request in the metrics (by operationId, method and status).
 * (pino-http did this with serializer passes and a child logger per request: about a tenth of the CPU
 * of a GET /payments/{id} under load; handlers get their request-scoped logger lazily in src/dispatch.ts.)
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../platform/logger.js';
import { requestIdOf } from './send.js';
import type { OperationInfo } from './spec.js';

/** Where each request is also counted (platform/prometheus.ts), by operation: never by path. */
export interface RequestMetrics {
  httpRequest(labels: { operation: string; method: string; status: string }, seconds: number): void;
}

/**
 * The metrics label of a request: its operationId, a fixed name a non-API route set in
 * res.locals.metricsOperation (/metrics), or 'unmatched' (404s, 405s, /docs, icons): a bounded set.
 */
function operationLabel(locals: Record<string, unknown>): string {
  return (locals.operation as OperationInfo | undefined)?.operationId ?? (locals.metricsOperation as string | undefined) ?? 'unmatched';
}

export function accessLog(log: Logger, metrics?: RequestMetrics): RequestHandler {
  // The line's members are fixed above (an id, the method, a path without its query, a status, a time):
  // none is a header, a body or a personal field's name, so the logger's redaction paths and personal-data
  // walk cannot change it, and it skips them (issue 26: they were ~3 % of a GET's CPU). Every other line
  // keeps both.
  const lines = log.child({}, { redact: [], formatters: { log: (o: object) => o } });
  return (req, res, next) => {
    const started = performance.now();
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const elapsed = performance.now() - started;
      const line = {
        req: { id: requestIdOf(res), method: req.method, url: req.originalUrl.split('?')[0] },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(elapsed),
      };
      metrics?.httpRequest({ operation: operationLabel(res.locals), method: req.method, status: res.writableFinished ? String(res.statusCode) : 'aborted' }, elapsed / 1000);
      if (!res.writableFinished) lines.info(line, 'request aborted');
      else if (res.statusCode >= 500) lines.error(line, 'request failed');
      else lines.info(line, 'request completed');
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
