/**
 * One JSON line per request once its response is done (or the client went away): the request id, the
 * method, the path without its query string, the status and the time. Never bodies or headers.
 * (pino-http did this with serializer passes and a child logger per request: about a tenth of the CPU
 * of a GET /payments/{id} under load; handlers get their request-scoped logger lazily in dispatch.ts.)
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../platform/logger.js';
import { requestIdOf } from './send.js';

export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const line = {
        req: { id: requestIdOf(res), method: req.method, url: req.originalUrl.split('?')[0] },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (!res.writableFinished) log.info(line, 'request aborted');
      else if (res.statusCode >= 500) log.error(line, 'request failed');
      else log.info(line, 'request completed');
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
