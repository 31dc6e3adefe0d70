import type { ServiceDeps } from '../services.js';
import { CredentialCache } from './credential-cache.js';

declare module '../context.js' {
  interface AppServices {
    /** Active API keys, cached briefly (tenancy/credential-cache.ts). */
    credentials: CredentialCache;
  }
}

export function buildTenancyServices(deps: Pick<ServiceDeps, 'config'>) {
  return { credentials: new CredentialCache(deps.config.credentialCacheSeconds * 1000) };
}
