import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { ensurePrivateDir } from '../platform/private-files.js';
import { tenancyRepository } from './repository.js';
import { createOrganization, type SandboxDefaults } from './service.js';

const BOOTSTRAP_LOCK = 727_002;

/**
 * Sandbox mode on an empty database: create a PCI-certified sandbox organization with one account (and,
 * as every organization, a connection to each sandbox acquirer and a CARD routing A then B) and
 * write its credentials to <DATA_DIR>/sandbox-credentials.json (mode 0600). The path is logged, never
 * the secret. Under an advisory lock, so two processes starting together create one organization.
 */
export async function bootstrapSandbox(db: Database, dataDir: string, log: Logger, sandboxDefaults: SandboxDefaults): Promise<string | undefined> {
  const file = join(dataDir, 'sandbox-credentials.json');
  // A file left by an earlier version (or loosened by hand) is made owner-only again at every start.
  await chmod(file, 0o600).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  const created = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
    if ((await tenancyRepository.countOrganizations(tx)) > 0) return undefined;
    return createOrganization(tx, { name: 'Sandbox', pciCertified: true }, { sandboxDefaults });
  });
  if (!created) return undefined;
  await ensurePrivateDir(dataDir);
  await writeFile(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  log.info({ file, organizationId: created.organization_id, accountId: created.account_id }, 'sandbox organization created; credentials written');
  return file;
}
