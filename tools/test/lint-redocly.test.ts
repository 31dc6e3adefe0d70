// tools/lint-redocly.mjs: the real spec is clean, and Redocly catches an OAS 3.0 leftover that
// Spectral lets through (the reason both linters run).
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { formatProblem, lintSpec } from '../lint-redocly.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
let tmp: string | undefined;

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('redocly lint', () => {
  it('finds no problems in spec/openapi.yaml', async () => {
    expect((await lintSpec()).map(formatProblem)).toEqual([]);
  });

  it('reports `nullable: true` in a component file with file:line', async () => {
    tmp = await mkdtemp(join(tmpdir(), 'payorch-redocly-'));
    await cp(join(repoRoot, 'spec'), join(tmp, 'spec'), { recursive: true });
    const file = join(tmp, 'spec/components/schemas/Health.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/^ {2}database:\n/m, '  database:\n    nullable: true\n'));

    const lines = (await lintSpec(join(tmp, 'spec/openapi.yaml'))).map(formatProblem);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Health\.yaml:\d+:\d+ error struct: .*nullable/);
  });
});
