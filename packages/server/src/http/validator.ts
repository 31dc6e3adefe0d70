import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import { withConditionalDiscriminators } from './discriminators.js';
import { STORABLE_FORMATS } from './formats.js';
import { loadSpec } from './spec.js';

/**
 * express-openapi-validator on the bundled spec. Requests are always validated (every error, not just
 * the first); responses when configured (tests and development), where a mismatch becomes a logged 500.
 * Security is ours (tenancy/authenticate.ts), so its security validation is off. `date` and `date-time`
 * are checked by our own formats: what the database stores (formats.ts).
 *
 * Compiling the spec costs ~1 s of CPU, so the apps of one process share the compiled validator per
 * setting (the test suites start dozens of servers per process). Its one per-app step, path-parameter
 * coercion through app.param on the first app it serves, concerns routes declared on the app with
 * parameters, and ours has none: handlers get their parameters from the spec's match.
 */
export function openApiValidator(validateResponses: boolean): RequestHandler[] {
  let handlers = compiled.get(validateResponses);
  if (!handlers) compiled.set(validateResponses, (handlers = compile(validateResponses)));
  return handlers;
}

const compiled = new Map<boolean, RequestHandler[]>();

function compile(validateResponses: boolean): RequestHandler[] {
  return OpenApiValidator.middleware({
    // Discriminated oneOfs as if/then (discriminators.ts): the validator's own handling of them is broken.
    apiSpec: withConditionalDiscriminators(loadSpec()) as never,
    validateApiSpec: true,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    ignoreUndocumented: true,
    // Evidence content is checked in code (strict base64, size, PDF bytes): cheaper than format: byte.
    validateFormats: true,
    formats: STORABLE_FORMATS,
  }) as unknown as RequestHandler[];
}
