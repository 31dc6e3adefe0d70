/**
 * The designer's loop (tools/dev.mjs) reloads a spec-only change in the running server instead of
 * restarting it (http/spec-reload.ts). A reload rebuilds what createApp builds from the spec; what modules
 * fixed when they loaded (the personal-data declaration, the Problem schema's caps) refuses the reload, so
 * the loop restarts. The process test drives dist/main.js over the IPC channel the loop uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factsFixedAtLoad, reloadSpec } from '../src/http/spec-reload.js';
import { loadSpec, type OpenApiDocument } from '../src/http/spec.js';
import { ADMIN_KEY } from './support/harness.js';
import { seedPgliteDataDir, startServerProcess, type ServerProcess } from './support/processes.js';

type Schemas = Record<string, { properties?: Record<string, Record<string, unknown>>; description?: string }>;
const schemasOf = (spec: OpenApiDocument) => (spec as unknown as { components: { schemas: Schemas } }).components.schemas;

describe('what a reload cannot take', () => {
  const edits: { name: string; edit: (s: Schemas) => void; fixed: boolean }[] = [
    { name: 'a description', edit: (s) => void (s.Customer!.description = 'changed'), fixed: false },
    { name: 'a new optional field that is not personal', edit: (s) => void (s.Customer!.properties!.nickname_flag = { type: 'boolean', 'x-personal-data': false }), fixed: false },
    { name: 'a new personal field', edit: (s) => void (s.Customer!.properties!.nickname = { type: 'string', maxLength: 40, 'x-personal-data': true }), fixed: true },
    { name: 'a field no longer personal', edit: (s) => void (s.Customer!.properties!.email!['x-personal-data'] = false), fixed: true },
    { name: "the Problem schema's detail cap", edit: (s) => void (s.Problem!.properties!.detail!.maxLength = 10), fixed: true },
  ];
  for (const c of edits) {
    it(`${c.name}: ${c.fixed ? 'needs a restart' : 'can be reloaded'}`, () => {
      const spec = loadSpec();
      expect(schemasOf(spec).Customer!.properties!.email!['x-personal-data']).toBe(true);
      const edited = loadSpec();
      c.edit(schemasOf(edited));
      expect(factsFixedAtLoad(edited) !== factsFixedAtLoad(spec)).toBe(c.fixed);
    });
  }

  it('reloadSpec swaps when the fixed facts are those of the start, says why not otherwise, and reports a swap that failed', async () => {
    const atStart = factsFixedAtLoad(loadSpec());
    let swaps = 0;
    expect(await reloadSpec(atStart, async () => void swaps++)).toEqual({ reloaded: true });
    expect(swaps).toBe(1);
    expect(await reloadSpec('another start', async () => void swaps++)).toEqual({ reloaded: false, reason: 'the personal-data declaration or the Problem schema changed' });
    expect(swaps).toBe(1);
    const failed = await reloadSpec(atStart, async () => {
      throw new Error('the reloaded API did not answer /v1/healthz (500)');
    });
    expect(failed).toEqual({ reloaded: false, reason: 'the reloaded API did not answer /v1/healthz (500)' });
  });
});

describe('the server process reloads over its IPC channel', () => {
  let dir: string;
  let server: ServerProcess;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payorch-reload-'));
    await seedPgliteDataDir(dir);
    server = await startServerProcess({ dataDir: dir, ipc: true });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers reloaded, logs it, and keeps answering: the API, its problems and /openapi.json', async () => {
    const before = await fetch(`${server.url}/openapi.json`);
    const tag = before.headers.get('etag');
    expect(await server.request({ type: 'payorch:reload-spec' }, 'payorch:spec-reloaded')).toEqual({ type: 'payorch:spec-reloaded', reloaded: true });
    await server.waitForLine(/"msg":"spec reloaded"/);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    const unknown = await fetch(`${server.baseUrl}/no-such-route`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const after = await fetch(`${server.url}/openapi.json`);
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).toBe(tag);
    // An authenticated operation through the new app: the admin API creates an organization.
    const created = await fetch(`${server.baseUrl}/admin/organizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'admin-api-key': ADMIN_KEY },
      body: JSON.stringify({ name: 'After the reload' }),
    });
    expect(created.status).toBe(201);
  });
});
