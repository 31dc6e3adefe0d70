// tools/lint-spectral.mjs, the warm Spectral of `npm run dev`: a second lint by the same linter sees the
// edits made to the spec's files since the first (Spectral's $ref resolver would answer the first run's
// files forever), the remembered example checks do not hide a change, and problems point at file:line.
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { createSpectralLinter } from '../lint-spectral.mjs';

const rulesetPath = join(dirname(fileURLToPath(import.meta.url)), '../../spec/.spectral.yaml');
let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const entry = `openapi: 3.1.0
info: { title: t, version: 1.0.0, description: d, contact: { name: n } }
servers: [{ url: /v1 }]
tags: [{ name: things, description: Things. }]
paths:
  /things:
    get:
      operationId: listThings
      summary: List things.
      description: Lists things.
      tags: [things]
      responses:
        '200':
          description: The thing.
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
              example: { name: bolt }
components:
  schemas:
    Thing: { $ref: './Thing.yaml' }
`;
const thing = (name: string) => `type: object\nadditionalProperties: false\nproperties:\n  name:\n${name}`;

it('a warm linter sees each edit of a referenced file, with its line; remembered checks are reused only for what did not change', async () => {
  dir = await mkdtemp(join(tmpdir(), 'payorch-lint-spectral-'));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'openapi.yaml'), entry);
  await writeFile(join(dir, 'Thing.yaml'), thing('    type: string\n    maxLength: 8\n'));
  const linter = createSpectralLinter({ rulesetPath, cwd: dir });
  const rules = (problems: string[], rule: string) => problems.filter((p) => p.includes(` ${rule}: `));

  const first = await linter.lint(join(dir, 'openapi.yaml'));
  expect(rules(first.problems, 'payorch-string-max-length')).toEqual([]);
  expect(rules(first.problems, 'oas3-valid-media-example')).toEqual([]);

  // The string loses its maxLength and the example no longer fits the schema.
  await writeFile(join(dir, 'Thing.yaml'), thing('    type: integer\n'));
  const second = await linter.lint(join(dir, 'openapi.yaml'));

  expect(rules(second.problems, 'oas3-valid-media-example')).toEqual([
    expect.stringMatching(/^openapi\.yaml:18:\d+ error oas3-valid-media-example: .*name.*integer/),
  ]);
  await writeFile(join(dir, 'Thing.yaml'), thing('    type: string\n'));
  const third = await linter.lint(join(dir, 'openapi.yaml'));
  expect(rules(third.problems, 'payorch-string-max-length')).toEqual([expect.stringMatching(/^Thing\.yaml:4:\d+ error payorch-string-max-length: /)]);
  expect(rules(third.problems, 'oas3-valid-media-example')).toEqual([]);

  // Nothing changed: the same answer, the example checks answered from memory.
  const fourth = await linter.lint(join(dir, 'openapi.yaml'));
  expect(fourth.problems).toEqual(third.problems);
  expect(fourth.memo.misses).toBe(0);
  expect(fourth.memo.hits).toBeGreaterThan(0);
});
