// The committed generated files (packages/types/openapi.json, packages/types/src/generated/openapi.ts
// and webhook-events.ts) match what tools/codegen.mjs makes from spec/, and the staleness check can
// actually fail.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYaml, stringifyYaml } from '@redocly/openapi-core';
import { generate, staleFiles, webhookEvents, type GeneratedFile } from '../codegen.mjs';

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
  it('generates the bundle, the types and the webhook event union', () => {
    expect(rel(committed)).toEqual(['packages/types/openapi.json', 'packages/types/src/generated/openapi.ts', 'packages/types/src/generated/webhook-events.ts']);
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

  it('a changed schema makes the bundle and the types stale', async () => {
    const schemaFile = join(tmp, 'spec/components/schemas/Health.yaml');
    const schema = parseYaml(await readFile(schemaFile, 'utf8')) as { properties: Record<string, unknown> };
    schema.properties.uptime_seconds = { description: 'Seconds since the process started.', type: 'integer', minimum: 0 };
    await writeFile(schemaFile, stringifyYaml(schema));

    const files = await generate({ specEntry: join(tmp, 'spec/openapi.yaml') });
    // Same target paths, different content: exactly what `codegen.mjs --check` reports as stale.
    expect(rel(files)).toEqual(rel(committed));
    expect(rel(await staleFiles(files))).toEqual(['packages/types/openapi.json', 'packages/types/src/generated/openapi.ts']);
    const [json, ts] = files.map((f) => f.content);
    expect(json).toContain('"uptime_seconds"');
    expect(ts).toMatch(/uptime_seconds\?: number/);
  });

  describe('webhook event union', () => {
    const bundled = () => JSON.parse(committed[0]!.content) as { webhooks: Record<string, { post: Record<string, unknown> }>; components: { schemas: Record<string, { properties: Record<string, { const?: string }> }> } };

    it('has one member per webhook of the spec, keyed by its type_event', () => {
      const doc = bundled();
      const events = committed[2]!.content;
      for (const name of Object.keys(doc.webhooks)) expect(events).toContain(`${JSON.stringify(name)}: components["schemas"]`);
      expect(events).toContain('export type WebhookEvent = WebhookEventMap[WebhookEventType];');
    });

    it('a new webhook joins the union', () => {
      const doc = bundled();
      doc.webhooks['payment.refunded'] = structuredClone(doc.webhooks['payment.succeeded']!);
      (doc.webhooks['payment.refunded']!.post as { description: string }).description = 'A payment was refunded.';
      (doc.webhooks['payment.refunded']!.post as { requestBody: unknown }).requestBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/EventPaymentRefunded' } } } };
      doc.components.schemas.EventPaymentRefunded = structuredClone(doc.components.schemas.EventPaymentSucceeded!);
      doc.components.schemas.EventPaymentRefunded.properties.type_event = { const: 'payment.refunded' };
      expect(webhookEvents(doc)).toContain('/** A payment was refunded. */\n    "payment.refunded": components["schemas"]["EventPaymentRefunded"];');
    });

    it.each([
      ['a body whose type_event is another event', (doc: ReturnType<typeof bundled>) => void (doc.components.schemas.EventPaymentDeclined!.properties.type_event = { const: 'payment.succeeded' }), /payment.declined: EventPaymentDeclined.type_event must be `const: payment.declined`/],
      ['a body without type_event', (doc: ReturnType<typeof bundled>) => void delete doc.components.schemas.EventPaymentDeclined!.properties.type_event, /EventPaymentDeclined.type_event must be/],
      ['an inline body schema', (doc: ReturnType<typeof bundled>) => void (doc.webhooks['payment.declined']!.post.requestBody = { content: { 'application/json': { schema: { type: 'object' } } } }), /webhook payment.declined: .*component schema/],
    ])('refuses %s', (_name, mutate, message) => {
      const doc = bundled();
      mutate(doc);
      expect(() => webhookEvents(doc)).toThrow(message);
    });
  });
});
