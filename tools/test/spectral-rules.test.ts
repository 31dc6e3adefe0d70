// Table-driven tests for the custom rules in spec/.spectral.yaml. A lint-clean fixture gives zero
// diagnostics of any rule (custom and spectral:oas recommended); each case applies one small mutation
// to a deep clone of it and expects exactly one diagnostic, of the rule under test, at the path of the
// offending node. On a copy of the real multi-file spec, a mistake in a component file is reported in
// that file, on its line, at the property (a custom function's result path is absolute in Spectral:
// one relative to its target used to land on `spec/openapi.yaml 1:1` with an empty path).
import fs from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Document, Spectral, type ISpectralDiagnostic } from '@stoplight/spectral-core';
import * as Parsers from '@stoplight/spectral-parsers';
import { bundleAndLoadRuleset } from '@stoplight/spectral-ruleset-bundler/with-loader';

process.env.SCARF_ANALYTICS ??= 'false';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const rulesetPath = join(repoRoot, 'spec/.spectral.yaml');
const fixturePath = join(here, 'fixtures/clean.openapi.yaml');

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
interface Violation extends Case {
  /** Where the one diagnostic must point: the JSON path of the offending node. */
  path: string[];
}

const PAY = ['paths', '/payments', 'post'];
const GET_PAY = ['paths', '/payments/{payment_id}', 'get'];
const HEALTH = ['paths', '/healthz', 'get'];
const SCHEMAS = ['components', 'schemas'];

// rule code -> mutations that must each give exactly one diagnostic of that rule, at `path`.
const violations: Record<string, Violation[]> = {
  'payorch-operation-id-camel-case': [
    { name: 'snake_case operationId', path: [...GET_PAY, 'operationId'], mutate: (d) => void (getPayment(d).operationId = 'get_payment') },
    { name: 'PascalCase operationId', path: [...PAY, 'operationId'], mutate: (d) => void (post(d).operationId = 'CreatePayment') },
  ],
  'payorch-success-examples': [
    { name: '200 without examples', path: [...GET_PAY, 'responses', '200', 'content', 'application/json'], mutate: (d) => void delete getPayment(d).responses['200'].content['application/json'].examples },
    { name: '200 without example', path: [...HEALTH, 'responses', '200', 'content', 'application/json'], mutate: (d) => void delete health(d).responses['200'].content['application/json'].example },
  ],
  'payorch-snake-case-properties': [
    {
      name: 'camelCase property in a component schema',
      path: [...SCHEMAS, 'Payment', 'properties', 'merchantReference'],
      mutate: (d) => void (schemas(d).Payment.properties.merchantReference = { type: 'string', maxLength: 64 }),
    },
    {
      name: 'kebab-case property in an inline response schema',
      path: [...HEALTH, 'responses', '200', 'content', 'application/json', 'schema', 'properties', 'up-since'],
      mutate: (d) => void (health(d).responses['200'].content['application/json'].schema.properties['up-since'] = { type: 'integer' }),
    },
  ],
  'payorch-problem-json-errors': [
    {
      name: '4xx as application/json',
      path: [...PAY, 'responses', '400', 'content'],
      mutate: (d) => {
        const r = post(d).responses['400'];
        r.content = { 'application/json': r.content['application/problem+json'] };
      },
    },
    { name: '4xx without content', path: [...PAY, 'responses', '400'], mutate: (d) => void delete post(d).responses['400'].content },
    {
      name: '4xx problem+json with another schema',
      path: [...PAY, 'responses', '400', 'content', 'application/problem+json', 'schema'],
      mutate: (d) =>
        void (post(d).responses['400'].content['application/problem+json'].schema = {
          type: 'object',
          properties: { message: { type: 'string', maxLength: 200 } },
        }),
    },
  ],
  'payorch-idempotency-key': [
    { name: 'Payments POST without X-Idempotency-Key', path: PAY, mutate: (d) => void delete post(d).parameters },
    { name: 'X-Idempotency-Key not required', path: PAY, mutate: (d) => void (post(d).parameters[0].required = false) },
  ],
  'payorch-string-max-length': [
    { name: 'string property without maxLength', path: [...SCHEMAS, 'CreatePaymentRequest', 'properties', 'description'], mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.description.maxLength },
    { name: 'nullable string without maxLength', path: [...SCHEMAS, 'Problem', 'properties', 'detail'], mutate: (d) => void delete schemas(d).Problem.properties.detail.maxLength },
    { name: 'path parameter without maxLength', path: [...GET_PAY, 'parameters', '0', 'schema'], mutate: (d) => void delete getPayment(d).parameters[0].schema.maxLength },
    { name: 'header parameter without maxLength', path: [...PAY, 'parameters', '0', 'schema'], mutate: (d) => void delete post(d).parameters[0].schema.maxLength },
  ],
  'payorch-parameter-examples': [
    { name: 'path parameter without example', path: [...GET_PAY, 'parameters', '0'], mutate: (d) => void delete getPayment(d).parameters[0].example },
    { name: 'header parameter without example', path: [...PAY, 'parameters', '0'], mutate: (d) => void delete post(d).parameters[0].example },
    {
      name: 'path parameter of the path item, from components, without example',
      path: ['components', 'parameters', 'PaymentId'],
      mutate: (d) => {
        d.components.parameters = { PaymentId: getPayment(d).parameters[0] };
        delete d.components.parameters.PaymentId.example;
        d.paths['/payments/{payment_id}'].parameters = [{ $ref: '#/components/parameters/PaymentId' }];
        delete getPayment(d).parameters;
      },
    },
  ],
  'payorch-bounded-collections': [
    {
      name: 'array without maxItems',
      mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.metadata.maxItems,
      path: [...SCHEMAS, 'CreatePaymentRequest', 'properties', 'metadata'],
    },
    {
      name: 'free-form object without maxProperties (in a response schema too)',
      mutate: (d) => void delete schemas(d).Payment.properties.raw_response.maxProperties,
      path: [...SCHEMAS, 'Payment', 'properties', 'raw_response'],
    },
    {
      name: 'request object neither closed nor bounded',
      mutate: (d) => void delete schemas(d).CreatePaymentRequest.properties.metadata.items.additionalProperties,
      path: [...SCHEMAS, 'CreatePaymentRequest', 'properties', 'metadata', 'items'],
    },
  ],
  'payorch-personal-data-declared': [
    {
      name: 'property of a person schema without a decision',
      path: [...SCHEMAS, 'CustomerPayer', 'properties', 'email'],
      mutate: (d) => void delete schemas(d).CustomerPayer.properties.email['x-personal-data'],
    },
    {
      // Spectral places a diagnostic on a $ref'd node at its target; the message names the property.
      name: '$ref property without a decision (the sibling keyword is read as written)',
      path: [...SCHEMAS, 'Address'],
      mutate: (d) => void delete schemas(d).CustomerPayer.properties.billing_address['x-personal-data'],
    },
    {
      name: 'a decision that is not a boolean',
      path: [...SCHEMAS, 'Address', 'properties', 'city'],
      mutate: (d) => void (schemas(d).Address.properties.city['x-personal-data'] = 'yes'),
    },
    {
      name: 'a schema outside the list that marks one property must decide the others',
      path: [...SCHEMAS, 'Contact', 'properties', 'phone_number'],
      mutate: (d) => {
        schemas(d).Contact = {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 64, 'x-personal-data': true }, phone_number: { type: 'string', maxLength: 20 } },
        };
        schemas(d).Payment.properties.contact = { $ref: '#/components/schemas/Contact' };
      },
    },
  ],
  // A missing member is reported on the object that lacks it.
  'payorch-security-declared': [
    { name: 'operation without security', path: GET_PAY, mutate: (d) => void delete getPayment(d).security },
    { name: 'open operation without `security: []`', path: HEALTH, mutate: (d) => void delete health(d).security },
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
    name: 'X-Idempotency-Key optional on an operation marked idempotent by nature',
    mutate: (d) => {
      post(d)['x-idempotent-by-nature'] = true;
      post(d).parameters[0].required = false;
    },
  },
  {
    name: 'POST outside the money-moving tags without X-Idempotency-Key',
    mutate: (d) => {
      post(d).tags = ['Health'];
      delete post(d).parameters;
    },
  },
  { name: 'path parameter with `examples` instead of `example`', mutate: (d) => void ((getPayment(d).parameters[0].examples = { one: { value: getPayment(d).parameters[0].example } }), delete getPayment(d).parameters[0].example) },
  {
    name: 'query parameter without example',
    mutate: (d) => void getPayment(d).parameters.push({ name: 'expand', in: 'query', required: false, description: 'More detail.', schema: { type: 'boolean' } }),
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
  it.each(table)('$rule: $name gives exactly one diagnostic, at the node', async ({ rule, mutate, path }) => {
    const results = await lintMutation(mutate);
    expect(describeResults(results)).toHaveLength(1);
    expect(results[0]!.code).toBe(rule);
    expect(results[0]!.path).toEqual(path);
  });

  it.each(allowed)('accepts: $name', async ({ mutate }) => {
    expect(describeResults(await lintMutation(mutate))).toEqual([]);
  });

  // The real spec itself is linted with this ruleset, failing at warn, by `npm run lint` (the tools
  // package's lint task, part of npm test): linting it here again cost ~25 s of CPU for the same answer.
});

describe('diagnostics in a multi-file spec point at the file, line and property', () => {
  // One lint of a copy of the real spec with a mistake in a component file, one in openapi.yaml's
  // shared responses and one for a rule driven by `given` alone (a control): the real spec's lint takes
  // seconds, so the three share it.
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Replaces `from` (which must occur) in a file of the copy. */
  async function edit(file: string, from: RegExp, to: string): Promise<void> {
    const text = await readFile(join(dir!, file), 'utf8');
    const next = text.replace(from, to);
    expect(next, `${file}: ${String(from)} not found`).not.toBe(text);
    await writeFile(join(dir!, file), next);
  }
  /** The 0-based line of the first line equal to `line` after the line equal to `after` (if given). */
  async function lineOf(file: string, line: string, after?: string): Promise<number> {
    const lines = (await readFile(join(dir!, file), 'utf8')).split('\n');
    const start = after === undefined ? 0 : lines.indexOf(after);
    const found = lines.findIndex((l, i) => i >= start && l === line);
    expect(start >= 0 && found >= 0, `${file}: ${line}`).toBe(true);
    return found;
  }

  it('string without maxLength, error response with another media type, camelCase property without a personal-data decision', async () => {
    dir = await mkdtemp(join(tmpdir(), 'payorch-spectral-'));
    await cp(join(repoRoot, 'spec'), join(dir, 'spec'), { recursive: true });
    const customer = 'spec/components/schemas/Customer.yaml';
    await edit(customer, /^( {2}gender:\n {4}x-personal-data: true\n {4}type: \[string, 'null'\]\n) {4}maxLength: 32\n/m, '$1');
    await edit(customer, /^properties:\n/m, "properties:\n  preferredLanguage:\n    type: [string, 'null']\n    maxLength: 35\n");
    await edit('spec/openapi.yaml', /^( {4}BadRequest:\n(?: {6}.*\n)*? {6}content:\n {8})application\/problem\+json:/m, '$1application/json:');

    const entry = join(dir, 'spec/openapi.yaml');
    const results = await spectral.run(new Document(await readFile(entry, 'utf8'), Parsers.Yaml, entry));
    const at = (code: string) =>
      results
        .filter((r) => r.code === code)
        .map((r) => ({ file: relative(dir!, r.source ?? ''), line: r.range.start.line, path: r.path.join('.') }));

    // Reported on the line of the property's key.
    const gender = await lineOf(customer, '  gender:');
    expect(at('payorch-string-max-length')).toEqual([{ file: customer, line: gender, path: 'properties.gender' }]);
    const camel = await lineOf(customer, '  preferredLanguage:');
    expect(at('payorch-snake-case-properties')).toEqual([{ file: customer, line: camel, path: 'properties.preferredLanguage' }]);
    // A new property of a person schema must decide whether it is personal; the existing ones (bare
    // $refs with the decision as a sibling keyword included) all have.
    expect(at('payorch-personal-data-declared')).toEqual([{ file: customer, line: camel, path: 'properties.preferredLanguage' }]);
    // Every operation using the shared response is reported at the response's `content` in openapi.yaml.
    const problems = at('payorch-problem-json-errors');
    expect(problems.length).toBeGreaterThan(0);
    const contentLine = await lineOf('spec/openapi.yaml', '      content:', '    BadRequest:');
    for (const p of problems) expect(p).toEqual({ file: 'spec/openapi.yaml', line: contentLine, path: 'components.responses.BadRequest.content' });
  }, 400_000);
});
