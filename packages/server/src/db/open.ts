import { join } from 'node:path';
import type { Config } from '../platform/config.js';
import { ensurePrivateDir } from '../platform/private-files.js';
import type { Database } from './database.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

/** The database the configuration names: a PostgreSQL server by DATABASE_URL, else PGlite in DATA_DIR. */
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, { max: config.databasePoolSize });
  await ensurePrivateDir(config.dataDir);
  return openPglite(join(config.dataDir, 'pglite'));
}
