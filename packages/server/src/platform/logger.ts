/**
 * Structured JSON logs (pino). Card data, secrets and customer data are removed here, by configuration,
 * so that no call site has to remember: request bodies are never logged, the paths below are censored
 * wherever they appear in a logged object, and an error (`err`, `error`) is logged as a redacted shape.
 * The personal fields are the spec's (`x-personal-data: true`, platform/personal-data.ts): a member
 * named like a field declared personal there is censored at any depth, with no list to update.
 */
import { pino, type Logger } from 'pino';
import { PERSONAL_DATA, personalCensor, type PersonalData } from './personal-data.js';

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

/** What an error is logged as: what kind of failure and where, never the data it was about. */
export interface RedactedError {
  type: string;
  code?: string;
  message: string;
  /** PostgreSQL's fields that name schema objects (never row values). */
  routine?: string;
  constraint?: string;
  table?: string;
  column?: string;
  /** Call frames only: the stack's first line repeats the message. */
  stack?: string;
  cause?: RedactedError;
}

/**
 * A message without the values in it: database and driver messages quote the offending value
 * ('date/time field value out of range: "0000-01-01"', 'invalid input syntax for type integer: "x"')
 * or put it after a colon; both are cut.
 */
export function redactMessage(message: string): string {
  return message
    .replace(/"[^"]*"/g, '"…"')
    .replace(/'[^']*'/g, "'…'")
    .replace(/: .*$/s, ': …');
}

/**
 * The redacted shape of an error: its class, code and redacted message, schema names from PostgreSQL
 * errors, call frames, and its cause. Everything else an error may carry is left out on purpose: pg and
 * PGlite errors hold the SQL text (`query`), the bound `params`, `detail` ("Key (email)=(…) already
 * exists") and `where` ("portal parameter $7 = '…'") — customer data.
 */
export function redactError(err: unknown, depth = 0): RedactedError {
  if (typeof err === 'string') return { type: 'string', message: redactMessage(err) };
  if (!(err instanceof Error)) {
    const kind = err === null ? 'null' : typeof err === 'object' ? ((err as object).constructor?.name ?? 'Object') : typeof err;
    const message = typeof (err as { message?: unknown } | null)?.message === 'string' ? redactMessage((err as { message: string }).message) : '[not an Error]';
    return { type: kind, message };
  }
  const e = err as Error & Record<string, unknown>;
  const text = (key: string) => (typeof e[key] === 'string' ? (e[key] as string) : undefined);
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : undefined;
  const frames = (e.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).join('\n');
  return {
    type: e.constructor?.name ?? e.name,
    ...(code !== undefined && { code }),
    message: redactMessage(e.message),
    ...(text('routine') && { routine: text('routine') }),
    ...(text('constraint') && { constraint: text('constraint') }),
    ...(text('table') && { table: text('table') }),
    ...(text('column') && { column: text('column') }),
    ...(frames && { stack: frames }),
    ...(e.cause !== undefined && depth < 3 && { cause: redactError(e.cause, depth + 1) }),
  };
}

/** `personal`: another declaration than the served spec's (a test's copy of the spec). */
export function createLogger(level: string, destination?: pino.DestinationStream, personal: PersonalData = PERSONAL_DATA): Logger {
  return pino(
    {
      level,
      base: { service: 'payorch' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // The spec's personal fields, by name at any depth (platform/personal-data.ts).
      formatters: { log: personalCensor(personal) },
      serializers: { err: (err: unknown) => redactError(err), error: (err: unknown) => redactError(err) },
    },
    destination,
  );
}
