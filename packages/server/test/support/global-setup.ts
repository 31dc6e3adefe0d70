/**
 * Runs once per `vitest run`: builds a migrated PGlite image so each test file opens its own database
 * from it in well under a second (a fresh initdb takes several), and checks the PostgreSQL server the
 * suite was asked to use (DATABASE_URL) answers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteImage: string;
    postgresUrl: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  const db = await openPglite('memory://');
  await migrate(db);
  const image = await db.dump();
  await db.close();
  const dir = await mkdtemp(join(tmpdir(), 'payorch-image-'));
  const file = join(dir, 'pglite-image.tar');
  await writeFile(file, Buffer.from(await image.arrayBuffer()));
  project.provide('pgliteImage', file);

  const url = process.env.DATABASE_URL;
  if (url) {
    const pg = await openPostgres(url, { max: 1 });
    try {
      if (!(await pg.ping())) throw new Error(`DATABASE_URL is set but PostgreSQL does not answer at ${url.replace(/\/\/[^@]*@/, '//***@')}`);
    } finally {
      await pg.close();
    }
  }
  project.provide('postgresUrl', url);
  // The image is 40 MB: each run removes its own.
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
