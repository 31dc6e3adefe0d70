// The committed generated files (packages/types/openapi.json, packages/types/src/generated/openapi.ts)
// match what tools/codegen.mjs makes from spec/, and the staleness check can actually fail.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYaml, stringifyYaml } from '@redocly/openapi-core';
import { generate, staleFiles, type GeneratedFile } from '../codegen.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
const rel = (files: GeneratedFile[]) => files.map((f) => relative(repoRoot, f.path)).sort();

let tmp: string;
let committed: GeneratedFile[];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'payorch-codegen-'));
  await cp(join(repoRoot, 'spec'), join(tmp, 'spec'), { recursive: true });
  committed = await generate();
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('codegen', () => {
  it('generates the bundle and the types', () => {
    expect(rel(committed)).toEqual(['packages/types/openapi.json', 'packages/types/src/generated/openapi.ts']);
  });

  it('committed generated files are fresh (run `npm run generate` if this fails)', async () => {
    const differing: GeneratedFile[] = [];
    for (const file of committed) {
      if ((await readFile(file.path, 'utf8').catch(() => null)) !== file.content) differing.push(file);
    }
    expect(rel(differing)).toEqual([]);
    // staleFiles is what `codegen.mjs --check` uses.
    expect(rel(await staleFiles(committed))).toEqual([]);
  });

  it('an unchanged copy of spec/ elsewhere gives the same output', async () => {
    const files = await generate({ specEntry: join(tmp, 'spec/openapi.yaml') });
    expect(files.map((f) => f.content)).toEqual(committed.map((f) => f.content));
  });

  it('a changed spec makes both files stale', async () => {
    const schemaFile = join(tmp, 'spec/components/schemas/Health.yaml');
    const schema = parseYaml(await readFile(schemaFile, 'utf8')) as { properties: Record<string, unknown> };
    schema.properties.uptime_seconds = { description: 'Seconds since the process started.', type: 'integer', minimum: 0 };
    await writeFile(schemaFile, stringifyYaml(schema));

    const files = await generate({ specEntry: join(tmp, 'spec/openapi.yaml') });
    // Same target paths, different content: exactly what `codegen.mjs --check` reports as stale.
    expect(rel(files)).toEqual(rel(committed));
    expect(rel(await staleFiles(files))).toEqual(rel(committed));
    const [json, ts] = files.map((f) => f.content);
    expect(json).toContain('"uptime_seconds"');
    expect(ts).toMatch(/uptime_seconds\?: number/);
  });
});
