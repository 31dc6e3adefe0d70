/**
 * Every migration file is registered in src/db/migrations/index.ts, in order, under its own name: a file
 * that is written but not listed would silently never run (a column the code reads would be missing).
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../src/db/migrations');

describe('migrations', () => {
  it('index.ts lists every file of src/db/migrations, in file-name order, each under its file name', async () => {
    const files = (await readdir(dir)).filter((f) => /^\d{4}_.+\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
    expect(files.length).toBeGreaterThan(0);
    expect(migrations.map((m) => m.version)).toEqual(files);
  });
});
