// Table-driven tests for the custom rules in spec/.spectral.yaml. A lint-clean fixture gives zero
// diagnostics of any rule (custom and spectral:oas recommended); each case applies one small mutation
// to a deep clone of it and expects exactly one diagnostic, of the rule under test.
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Document, Spectral, type ISpectralDiagnostic } from '@stoplight/spectral-core';
import * as Parsers from '@stoplight/spectral-parsers';
import { bundleAndLoadRuleset } from '@stoplight/spectral-ruleset-bundler/with-loader';

process.env.SCARF_ANALYTICS ??= 'false';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const rulesetPath = join(repoRoot, 'spec/.spectral.yaml');
const realSpecPath = join(repoRoot, 'spec/openapi.yaml');
const fixturePath = join(here, 'fixtures/clean.openapi.yaml');

// Spectral's DiagnosticSeverity: 0 error, 1 warn, 2 info, 3 hint.
const WARN = 1;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

let spectral: Spectral;
let fixtureText: string;
let fixture: Doc;

beforeAll(async () => {
  spectral = new Spectral();
  // Node 20's global fetch: the ruleset has no remote parts, the loader just needs one.
  spectral.setRuleset(await bundleAndLoadRuleset(rulesetPath, { fs, fetch }));
  fixtureText = await readFile(fixturePath, 'utf8');
  // Spectral's YAML parser returns objects with extra metadata; keep a plain JSON copy to clone.
  fixture = JSON.parse(JSON.stringify(Parsers.Yaml.parse(fixtureText).data));
});

function describeResults(results: ISpectralDiagnostic[]): string[] {
  return results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
}

async function lintObject(doc: Doc): Promise<ISpectralDiagnostic[]> {
  // Same directory as the fixture, so the document is resolved the same way.
  const source = join(here, 'fixtures/mutated.openapi.json');
  return spectral.run(new Document(JSON.stringify(doc, null, 2), Parsers.Json, source));
}

async function lintMutation(mutate: (doc: Doc) => void): Promise<ISpectralDiagnostic[]> {
  const doc = structuredClone(fixture);
  mutate(doc);
  return lintObject(doc);
}

const post = (d: Doc) => d.paths['/payments'].post;
const getPayment = (d: Doc) => d.paths['/payments/{payment_id}'].get;
const health = (d: Doc) => d.paths['/healthz'].get;
const schemas = (d: Doc) => d.components.schemas;

interface Case {
  name: string;
  mutate: (doc: Doc) => void;
  /** Where the one diagnostic must point, when the case says. */
  path?: string;
}

// rule code -> mutations that must each give exactly one diagnostic of that rule.
const violations: Record<string, Case[]> = {
  'payorch-operation-id-camel-case': [
    { name: 'snake_case operationId', mutate: (d) => void (getPayment(d).operationId = 'get_payment') },
    { name: 'PascalCase operationId', mutate: (d) => void (post(d).operationId = 'CreatePayment') },
  ],
  'payorch-success-examples': [
    { name: '200 without examples', mutate: (d) => void delete getPayment(d).responses['200'].content['application/json'].examples },
    { name: '200 without example', mutate: (d) => void delete health(d).responses['200'].content['application/json'].example },
  ],
  'payorch-snake-case-properties': [
    {
      name: 'camelCase property in a component schema',
      mutate: (d) => void (schemas(d).Payment.properties.merchantReference = { type: 'string', maxLength: 64 }),
    },
    {
      name: 'kebab-case property in an inline response schema',
      mutate: (d) => void (health(d).responses['200'].content['application/json'].schema.properties['up-since'] = { type: 'integer' }),
    },
  ],
  'payorch-problem-json-errors': [
    {
      name: '4xx as application/json',
      mutate: (d) => {
        const r = post(d).responses['400'];
        r.content = { 'application/json': r.content['application/problem+json'] };
      },
    },
    { name: '4xx without content', mutate: (d) => void delete post(d).responses['400'].content },
    {
      name: '4xx problem+json with another schema',
      mutate: (d) =>
        void (post(d).responses['400'].content['application/problem+json'].schema = {
          type: 'object',
          properties: { message: { type: 'string', maxLength: 200 } },
        }),
    },
  ],
  'payorch-idempotency-key': [
    { name: 'Payments POST without X-Idempotency-Key', mutate: (d) => void delete post(d).parameters },
    { name: 'X-Idempotency-Key not required', mutate: (d) => void (post(d).parameters[0].required = false) },
  ],
  'payorch-string-max-length': [
    { name: 'string property without maxLength', mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.description.maxLength },
    { name: 'nullable string without maxLength', mutate: (d) => void delete schemas(d).Problem.properties.detail.maxLength },
    { name: 'path parameter without maxLength', mutate: (d) => void delete getPayment(d).parameters[0].schema.maxLength },
    { name: 'header parameter without maxLength', mutate: (d) => void delete post(d).parameters[0].schema.maxLength },
  ],
  'payorch-bounded-collections': [
    {
      name: 'array without maxItems',
      mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.metadata.maxItems,
      path: 'components.schemas.CreatePaymentRequest.properties.metadata',
    },
    {
      name: 'free-form object without maxProperties (in a response schema too)',
      mutate: (d) => void delete schemas(d).Payment.properties.raw_response.maxProperties,
      path: 'components.schemas.Payment.properties.raw_response',
    },
    {
      name: 'request object neither closed nor bounded',
      mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.metadata.items.additionalProperties,
      path: 'components.schemas.CreatePaymentRequest.properties.metadata.items',
    },
  ],
  'payorch-security-declared': [
    { name: 'operation without security', mutate: (d) => void delete getPayment(d).security },
    { name: 'open operation without `security: []`', mutate: (d) => void delete health(d).security },
  ],
};

// Mutations close to a violation that the rules must accept.
const allowed: Case[] = [
  {
    name: 'X-Idempotency-Key declared on the path item',
    mutate: (d) => {
      d.paths['/payments'].parameters = post(d).parameters;
      delete post(d).parameters;
    },
  },
  {
    name: 'POST outside the money-moving tags without X-Idempotency-Key',
    mutate: (d) => {
      post(d).tags = ['Health'];
      delete post(d).parameters;
    },
  },
  { name: 'string bounded by enum alone', mutate: (d) => void (schemas(d).CreatePaymentRequest.properties.description = { type: 'string', enum: ['a', 'b'] }) },
  {
    name: 'response object with declared properties and no additionalProperties (not free-form)',
    mutate: (d) => void delete schemas(d).Payment.properties.raw_response,
  },
  {
    name: 'free-form request object bounded by maxProperties',
    mutate: (d) => {
      const item = schemas(d).CreatePaymentRequest.properties.metadata.items;
      item.additionalProperties = { type: 'string', maxLength: 64 };
      item.maxProperties = 50;
    },
  },
  { name: 'string bounded by const alone', mutate: (d) => void (schemas(d).CreatePaymentRequest.properties.description = { type: 'string', const: 'a' }) },
];

describe('spectral ruleset (spec/.spectral.yaml)', () => {
  it('defines a test for every custom rule', () => {
    const rulesetText = fs.readFileSync(rulesetPath, 'utf8');
    const custom = [...rulesetText.matchAll(/^ {2}(payorch-[a-z0-9-]+):/gm)].map((m) => m[1]);
    expect(custom.sort()).toEqual(Object.keys(violations).sort());
  });

  it('gives zero diagnostics of any rule on the clean fixture', async () => {
    const results = await spectral.run(new Document(fixtureText, Parsers.Yaml, fixturePath));
    expect(describeResults(results)).toEqual([]);
  });

  it('gives zero diagnostics on the unmutated fixture as JSON (control for the mutation cases)', async () => {
    expect(describeResults(await lintObject(structuredClone(fixture)))).toEqual([]);
  });

  const table = Object.entries(violations).flatMap(([rule, cases]) => cases.map((c) => ({ rule, ...c })));
  it.each(table)('$rule: $name gives exactly one diagnostic', async ({ rule, mutate, path }) => {
    const results = await lintMutation(mutate);
    expect(describeResults(results)).toHaveLength(1);
    expect(results[0]!.code).toBe(rule);
    if (path !== undefined) expect(results[0]!.path.join('.')).toBe(path);
  });

  it.each(allowed)('accepts: $name', async ({ mutate }) => {
    expect(describeResults(await lintMutation(mutate))).toEqual([]);
  });

  it('finds nothing at warn or above in the real spec/openapi.yaml', async () => {
    const text = await readFile(realSpecPath, 'utf8');
    const results = await spectral.run(new Document(text, Parsers.Yaml, realSpecPath));
    expect(describeResults(results.filter((r) => r.severity <= WARN))).toEqual([]);
  });
});
