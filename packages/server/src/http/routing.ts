import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { LARGE_STRING, parseJsonBytes } from './large-json.js';
import { problemBody } from './problems.js';
import { sendProblem } from './send.js';
import { matchOperation, type OperationInfo } from './spec.js';

/** The type of the marked error that carries a body parsed in `verify` (see parseJsonBody). */
const PARSED = 'payorch.body.parsed';

/** Finds the spec operation for the request (404 unknown route, 405 known path with another method). */
export function resolveOperation(ops: readonly OperationInfo[]): RequestHandler {
  return (req, res, next) => {
    const match = matchOperation(ops, req.method, req.path);
    if (match.kind === 'not-found') return sendProblem(req, res, 404, problemBody('NOT_FOUND', `No route ${req.method} ${req.originalUrl.split('?')[0]}.`));
    if (match.kind === 'method-not-allowed') {
      return sendProblem(req, res, 405, problemBody('UNSUPPORTED_METHOD', `${req.method} is not allowed here; use ${match.allow.join(', ')}.`), {
        Allow: match.allow.join(', '),
      });
    }
    res.locals.operation = match.operation;
    next();
  };
}

/**
 * JSON body parsing with the operation's own size limit (a dispute takes 10 MB-sized files, a customer 100 KB).
 * Past the limit the answer is 413 at once — a declared Content-Length before a byte is read, a streamed
 * body as soon as it crosses the limit — and the connection is closed after a bounded linger: body-parser
 * alone would read (and discard) the whole body first, however large, before answering.
 */
export function parseJsonBody(checkRaw: (operation: OperationInfo, raw: Buffer) => void = () => {}): RequestHandler {
  const parsers = new Map<number, RequestHandler>();
  return (req, res, next) => {
    const { bodyLimit } = res.locals.operation as OperationInfo;
    // The body is unread: sendProblem answers with Connection: close and a lingering close (lingering-close.ts).
    const tooLarge = () => {
      if (res.headersSent) return;
      sendProblem(req, res, 413, problemBody('PAYLOAD_TOO_LARGE', `The request body is larger than the ${bodyLimit} bytes this route accepts.`));
    };
    if (Number(req.headers['content-length']) > bodyLimit) return tooLarge();
    // Only a request with a body (as HTTP/1.1 frames one) is watched: a listener on a GET would set its
    // stream flowing for nothing.
    if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined) {
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > bodyLimit) tooLarge();
      });
    }
    let parser = parsers.get(bodyLimit);
    if (!parser) {
      parser = express.json({
        limit: bodyLimit,
        strict: true,
        type: ['application/json'],
        // A signed request (Standard Webhooks) is verified over its exact bytes: keep them.
        verify: (req, res, buf, encoding) => {
          // Invalid UTF-8 would be decoded into U+FFFD silently and stored: refuse it instead.
          if (!isUtf8(buf)) throw Object.assign(new Error('The request body is not valid UTF-8.'), { status: 400, type: 'encoding.invalid' });
          const operation = (res as unknown as { locals: { operation: OperationInfo } }).locals.operation;
          checkRaw(operation, buf);
          // Unauthenticated operations are the providers' notifications, each signed in its own scheme.
          if (req.headers['webhook-signature'] !== undefined || operation.security === 'none') (req as typeof req & { rawBody?: Buffer }).rawBody = buf;
          // A large UTF-8 body is parsed here, from its bytes, keeping its large strings off V8's heap
          // (large-json.ts). body-parser has no hook between reading and decoding, so the parsed body
          // leaves as a marked error that the `next` below turns back into success.
          if (buf.length >= LARGE_STRING && encoding === 'utf-8') {
            let parsed: unknown;
            try {
              parsed = parseJsonBytes(buf);
            } catch {
              throw Object.assign(new Error('The request body is not valid JSON.'), { status: 400, type: 'entity.parse.failed' });
            }
            (req as typeof req & { body?: unknown }).body = parsed;
            throw Object.assign(new Error('parsed'), { type: PARSED });
          }
        },
      });
      parsers.set(bodyLimit, parser);
    }
    parser(req, res, (err?: unknown) => ((err as { type?: unknown } | null | undefined)?.type === PARSED ? next() : next(err)));
  };
}
