/**
 * DATA_DIR holds the embedded database, the sandbox credentials and the vault key, so it and everything
 * in it are owner-only (directories 0700, files 0600) whatever the process umask.
 *
 * Measured with PGlite 0.5 under umask 000: the files its initdb image unpacks are 0666 and its relcache
 * files (pg_internal.init, rewritten at each start) 0644, whatever the umask; what PostgreSQL itself
 * creates later (WAL segments, relations, temporary files, database directories) it creates 0600/0700.
 * So one pass over the tree once the database is open leaves every file owner-only for the rest of
 * the run (test/data-at-rest.test.ts checks it after real traffic, a restart and a stop).
 */
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Creates `dir` (and missing parents) owner-only, and makes an existing one owner-only too. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/** Makes `root` and everything under it owner-only: directories 0700, files 0600 (symbolic links are left alone). */
export async function restrictTree(root: string): Promise<void> {
  await chmod(root, 0o700);
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) await restrictTree(path);
    else if (entry.isFile()) await chmod(path, 0o600);
  }
}
