/**
 * Authentication per operation, as the spec's `security` says: the merchant key pair, the operator's
 * admin key, or nothing. Runs before the body is read, so an unauthenticated caller learns nothing
 * about the request's validity.
 */
import type { RequestHandler } from 'express';
import { clientAddressKey, sendAuthRateLimited, type AuthFailureLimiter } from '../ratelimit/auth-failures.js';
import type { AppDeps, MerchantAuth } from '../context.js';
import type { OperationInfo } from '../http/spec.js';
import { problemBody } from '../http/problems.js';
import { sendProblem } from '../http/send.js';
import { constantTimeEquals, secretMatches, sha256 } from './credentials.js';
import type { ApiKeyRow } from './repository.js';

const DUMMY_HASH = sha256('no such key');

export function authenticate(deps: AppDeps, failures: AuthFailureLimiter): RequestHandler {
  // Not async: with the key pair cached (CredentialCache) a request authenticates without a promise.
  return (req, res, next) => {
    const operation = res.locals.operation as OperationInfo;
    // Parsed only when needed: a request that authenticates, with no address blocked, never pays for it.
    const address = () => clientAddressKey(req.ip);
    const limited = (seconds: number) => sendAuthRateLimited(req, res, seconds);
    const unauthorized = async (detail: string) => {
      const wait = await failures.failed(address());
      return wait > 0 ? limited(wait) : sendProblem(req, res, 401, problemBody('INVALID_CREDENTIALS', detail));
    };
    const refuse = (detail: string) => void unauthorized(detail).catch(next);
    /** The key of `publicKey`, then `then` with it: at once when cached, after the lookup otherwise. */
    const withKey = (publicKey: string, then: (key: ApiKeyRow | undefined) => void) => {
      const found = publicKey.length <= 128 ? deps.services.credentials.findActiveApiKey(deps.db, publicKey) : undefined;
      if (found instanceof Promise) return void found.then(then).catch(next);
      return then(found);
    };
    try {
      if (operation.security === 'none') return next();
      // An address over its failure limit is refused before any credential is looked at.
      const wait = failures.waitFor(address);
      if (wait > 0) return limited(wait);

      if (operation.security === 'admin') {
        // The admin API does not exist unless ADMIN_API_KEY is configured.
        if (!deps.config.adminApiKey) return sendProblem(req, res, 404, problemBody('NOT_FOUND', `No route ${req.method} ${req.path}.`));
        const given = req.get('admin-api-key');
        if (!given || !constantTimeEquals(given, deps.config.adminApiKey)) return refuse('The admin-api-key header is missing or wrong.');
        return next();
      }

      const publicKey = req.get('public-api-key');
      if (operation.security === 'public') {
        // A shopper's browser holds only the public key; a secret sent along is not looked at (it is not
        // needed, and checking it would invite merchants to put it in pages).
        if (!publicKey) return refuse('Send the public-api-key header.');
        return withKey(publicKey, (key) => {
          if (!key) return refuse('The public-api-key header does not identify an active key.');
          const merchant: MerchantAuth = { organizationId: key.organization_id, pciCertified: key.pci_certified, publicKey: key.public_key, publicOnly: true };
          res.locals.merchant = merchant;
          return next();
        });
      }
      const secret = req.get('private-secret-key');
      if (!publicKey || !secret) {
        return refuse('Send both the public-api-key and private-secret-key headers.');
      }
      return withKey(publicKey, (key) => {
        // Compare against a dummy hash when the key is unknown, so timing does not reveal which half is wrong.
        const ok = secretMatches(secret, key?.secret_sha256 ?? DUMMY_HASH) && key !== undefined;
        if (!ok || !key) return refuse('The public-api-key and private-secret-key headers do not identify an active key pair.');
        const merchant: MerchantAuth = { organizationId: key.organization_id, pciCertified: key.pci_certified, publicKey: key.public_key };
        res.locals.merchant = merchant;
        return next();
      });
    } catch (err) {
      return next(err);
    }
  };
}
