import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import { STORABLE_FORMATS } from './formats.js';
import type { OpenApiDocument } from './spec.js';

/**
 * express-openapi-validator on the bundled spec. Requests are always validated (every error, not just
 * the first); responses when configured (tests and development), where a mismatch becomes a logged 500.
 * Security is ours (tenancy/authenticate.ts), so its security validation is off. `date` and `date-time`
 * are checked by our own formats: what the database stores (formats.ts).
 */
export function openApiValidator(spec: OpenApiDocument, validateResponses: boolean): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: spec as never,
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
