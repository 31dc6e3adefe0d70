/**
 * Structured JSON logs (pino). Card data and secrets are removed here, by configuration, so that no call
 * site has to remember: request bodies are never logged, and the paths below are censored wherever
 * they appear in a logged object.
 */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers["private-secret-key"]',
  'req.headers["admin-api-key"]',
  'req.headers["public-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  'headers["private-secret-key"]',
  'headers["admin-api-key"]',
  '*.number',
  '*.security_code',
  '*.card_data',
  '*.private_secret_key',
  '*.secret',
  '*.content',
  'body',
  '*.body',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'payorch' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}
