import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Every response carries X-Request-Id: the caller's if it is a sane token, else a new UUID. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  const id = given && SAFE_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
