/**
 * The credential cache (src/tenancy/credential-cache.ts) against a real database: a key revoked while a
 * lookup of it is under way is never left in the cache as active (the lookup read it before the
 * revocation; it may answer its own requests, but the next request reads the key afresh).
 */
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { CredentialCache } from '../src/tenancy/credential-cache.js';
import { ADMIN_KEY, backends, useServer } from './support/harness.js';

for (const backend of backends()) {
  describe(`the credential cache on ${backend}`, () => {
    const t = useServer(backend);

    it('a revocation during a lookup of the key leaves nothing cached: the next request finds the key revoked', async () => {
      const creds = await t.createOrganization();
      // The key's row is read at once; its answer is held until the test lets it go.
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => (letGo = resolve));
      let lookups = 0;
      const holding: Queryable = {
        query: async (text, params) => {
          const rows = await t.db.query(text, params);
          if (/FROM api_keys/.test(text) && ++lookups === 1) await held;
          return rows as never;
        },
        exec: (sql) => t.db.exec(sql),
        transaction: (fn) => t.db.transaction(fn),
      };
      const cache = new CredentialCache(60_000);
      const first = cache.findActiveApiKey(holding, creds.public_api_key);
      await expect.poll(() => lookups).toBe(1);

      const revoked = await fetch(`${t.baseUrl}/admin/organizations/${creds.organization_id}/api-keys/${creds.public_api_key}`, {
        method: 'DELETE',
        headers: { 'admin-api-key': ADMIN_KEY },
      });
      expect(revoked.status).toBe(204);
      cache.forget(creds.public_api_key);
      letGo();
      expect((await first)?.organization_id).toBe(creds.organization_id); // read before the revocation

      expect(await cache.findActiveApiKey(holding, creds.public_api_key)).toBeUndefined();
      expect(lookups).toBe(2);
    });
  });
}
