/**
 * What the schema cannot say of a connection's credentials (POST /v1/connections, 422
 * CONNECTION_VALIDATION_FAILED), per provider: whether they belong to the connection's environment, as
 * far as the provider's key formats tell, and fields only one environment takes. The shapes themselves
 * (fields, lengths, formats) are the spec's credentials oneOf.
 */
import type { FieldError } from '../http/problems.js';
import { SANDBOX_A, SANDBOX_B } from '../providers/registry.js';
import { ownEntry } from '../platform/own-entry.js';

export type Environment = 'TEST' | 'LIVE';

type Rule = (credentials: Readonly<Record<string, string>>, environment: Environment) => FieldError[];

const at = (field: string) => `/body/credentials/${field}`;

const sandboxOnly = (environment: Environment): FieldError[] =>
  environment === 'TEST' ? [] : [{ path: '/body/environment', message: 'must be TEST: the sandbox providers move no money' }];

const RULES: Readonly<Record<string, Rule>> = {
  // Stripe keys say their mode: sk_test_/rk_test_ reach test data only, sk_live_/rk_live_ live money.
  STRIPE: ({ secret_key: key = '' }, environment) => {
    const live = /^(sk|rk)_live_/.test(key);
    if (environment === 'TEST' && live) return [{ path: at('secret_key'), message: 'must be a test key (sk_test_ or rk_test_) on a TEST connection' }];
    if (environment === 'LIVE' && !live) return [{ path: at('secret_key'), message: 'must be a live key (sk_live_ or rk_live_) on a LIVE connection' }];
    return [];
  },
  // Adyen's live Checkout endpoints carry the company's prefix; the test ones have none.
  ADYEN: ({ live_url_prefix: prefix }, environment) => {
    if (environment === 'LIVE' && prefix === undefined) return [{ path: at('live_url_prefix'), message: 'is required on a LIVE connection (Customer Area: Developers > API URLs)' }];
    if (environment === 'TEST' && prefix !== undefined) return [{ path: at('live_url_prefix'), message: 'is for LIVE connections only: leave it out on a TEST connection' }];
    return [];
  },
  // TEST- tokens are test credentials; APP_USR- ones are production credentials (of a real or a test user).
  MERCADO_PAGO: ({ access_token: token = '' }, environment) =>
    environment === 'LIVE' && token.startsWith('TEST-') ? [{ path: at('access_token'), message: 'must be a production token (APP_USR-) on a LIVE connection' }] : [],
  [SANDBOX_A]: (_c, environment) => sandboxOnly(environment),
  [SANDBOX_B]: (_c, environment) => sandboxOnly(environment),
};

/** Every rule the credentials break (none for a provider without rules). */
export function credentialProblems(providerId: string, environment: Environment, credentials: Readonly<Record<string, string>>): FieldError[] {
  return ownEntry(RULES, providerId)?.(credentials, environment) ?? [];
}
