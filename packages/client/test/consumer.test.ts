/**
 * The integrator's view: `npm pack` @payorch/client ALONE (the API types are bundled in its dist,
 * @payorch/types is only a devDependency) with the client guide's own install commands, which install the tarball into a fresh project outside
 * the workspace (openapi-fetch comes from the npm registry, nothing else is fetched: there is no
 * @payorch/types to fetch), type-check a small consumer and every TypeScript snippet of the READMEs under
 * NodeNext (emitting the consumer) and Bundler resolution with the workspace's TypeScript, then run the
 * consumer against the test server. Prints a summary (sizes, timings, the script's output).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { server } from './support/clients.js';
import { tinyPdf } from './support/pdf.js';
import { WORKSPACE_ROOT } from './support/server.js';

const run = promisify(execFile);
const TSC = join(WORKSPACE_ROOT, 'node_modules/typescript/bin/tsc');

/** The environment minus what `npm run`/workspaces inject, so the nested npm acts like a fresh shell's. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_|^npm_config_(workspaces?|include_workspace_root|prefix|global|location)$|^INIT_CWD$/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...extra };
}

const CONSUMER_TS = `
import { createPayorchClient, evidenceFromBytes, PayorchError, signWebhook, verifyWebhook, type Schemas, type WebhookEvent } from '@payorch/client';
import { evidenceFromFile } from '@payorch/client/node';

declare const process: { env: Record<string, string | undefined> };
declare const console: { log(...values: unknown[]): void };

const payorch = createPayorchClient({
  baseUrl: process.env.PAYORCH_BASE_URL!,
  publicApiKey: process.env.PAYORCH_PUBLIC_API_KEY!,
  privateSecretKey: process.env.PAYORCH_PRIVATE_SECRET_KEY!,
});

// What must not compile, in the integrator's project too (never called).
export function typeChecks() {
  // @ts-expect-error merchant_customer_id is required
  void payorch.customers.create({ first_name: 'Ada' });
  // @ts-expect-error unknown path
  void payorch.GET('/customer');
  // @ts-expect-error the key is a string
  void payorch.payments.create({} as Schemas['CreatePaymentRequest'], { idempotencyKey: 42 });
}

const health = await payorch.GET('/healthz');
const customer: Schemas['Customer'] = await payorch.customers.create({ merchant_customer_id: 'consumer-' + crypto.randomUUID(), first_name: 'Ada' });

let duplicate: { status: number; code: string; request_id: string | undefined } | undefined;
try {
  await payorch.customers.create({ merchant_customer_id: customer.merchant_customer_id });
} catch (err) {
  if (!(err instanceof PayorchError)) throw err;
  duplicate = { status: err.status, code: err.code, request_id: err.request_id };
}

const raw = await payorch.POST('/customers', { body: { merchant_customer_id: customer.merchant_customer_id } });
const narrowed = raw.error ? raw.error.code : raw.data.id;

const secret = 'whsec_' + btoa('consumer-test-secret-32-bytes!!!');
const body = JSON.stringify({ type_event: 'payment.succeeded', data: { payment: { id: customer.id } } });
const event: WebhookEvent = await verifyWebhook(body, await signWebhook(body, secret), secret);
// narrowed by type_event: only a payment event has data.payment
const verified = event.type_event === 'payment.succeeded' ? { type_event: event.type_event, payment_id: event.data.payment.id } : undefined;

const fromFile = await evidenceFromFile('receipt.pdf', { content_category: 'RECEIPT' });
let tooBig = '';
try {
  evidenceFromBytes(new Uint8Array(1_048_577), { file_name: 'big.pdf', content_category: 'RECEIPT' });
} catch (err) {
  tooBig = (err as Error).name;
}

console.log(JSON.stringify({ health: health.data, customer: { id: customer.id, first_name: customer.first_name }, duplicate, narrowed, verified, evidence: { file_name: fromFile.file_name, bytes: fromFile.content.length }, tooBig }));
`;

/**
 * What the READMEs' snippets take from the reader's own code, declared (names of @payorch/client itself
 * are imported for each snippet that uses them, see readmeSnippets).
 */
const README_ENV = `
declare const publicApiKey: string, privateSecretKey: string, account_id: string, baseUrl: string;
declare const myFetch: typeof fetch;
declare const payorch: import('@payorch/client').PayorchClient;
declare const process: { env: Record<string, string | undefined> };
declare const body: {
  account_id: string; description: string; country: 'BR'; merchant_order_id: string; amount: { currency: string; value: number };
  customer_payer: { id: string }; payment_method: { type: 'CARD'; vaulted_token: string };
};
declare const file: File, pdfBytes: Uint8Array, paymentId: string, chargebackTransactionId: string, customerId: string;
// An Express app, as far as the webhook snippet uses one.
interface ExpressRequest { body: Uint8Array; headers: Record<string, string | string[] | undefined> }
interface ExpressResponse { sendStatus(status: number): ExpressResponse }
declare const express: { raw(options: { type: string }): unknown };
declare const app: { post(path: string, middleware: unknown, handler: (req: ExpressRequest, res: ExpressResponse) => Promise<unknown>): void };
`;

const README_FILES = ['packages/client/README.md', 'README.md'];

/** Every \`\`\`ts block of the client's README and of the repository's README. */
async function readmeSnippets(): Promise<{ name: string; code: string }[]> {
  const exported = new Set<string>();
  const dts = await readFile(join(WORKSPACE_ROOT, 'packages/client/dist/index.d.ts'), 'utf8');
  for (const [, list] of dts.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
    for (const item of list!.split(',')) {
      const name = item.trim().replace(/^type\s+/, '').split(/\s+as\s+/).at(-1)!;
      if (name) exported.add(name);
    }
  }
  const snippets: { name: string; code: string }[] = [];
  for (const readme of README_FILES) {
    const text = await readFile(join(WORKSPACE_ROOT, readme), 'utf8');
    for (const match of text.matchAll(/^( *)```(?:ts|typescript)\n([\s\S]*?)^\1```/gm)) {
      const indent = match[1]!;
      const lines = match[2]!.split('\n').map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      const imports = lines.filter((l) => /^import\b/.test(l));
      const rest = lines.filter((l) => !/^import\b/.test(l));
      const imported = imports.join('\n');
      // The client's names a snippet uses without importing them: the reader imports them.
      const missing = [...exported].filter((n) => new RegExp(`\\b${n}\\b`).test(rest.join('\n')) && !new RegExp(`\\b${n}\\b`).test(imported));
      const line = text.slice(0, match.index).split('\n').length;
      snippets.push({
        name: `${readme}:${line}`,
        code: [
          `// ${readme}, line ${line}`,
          ...imports,
          ...(missing.length ? [`import { ${missing.join(', ')} } from '@payorch/client';`] : []),
          // The body runs in an async function: top-level await and \`return\` as in the reader's code.
          'export async function snippet() {',
          ...rest,
          '}',
          '',
        ].join('\n'),
      });
    }
  }
  return snippets;
}

/** The folder the install commands name for the reader's app (replaced by the test's temporary project). */
const APP_DIR = '../my-shop';

/**
 * The ```sh block after `<!-- install-commands -->` in docs/guides/client.md, which the client's README
 * repeats word for word: the commands this test runs.
 */
async function installCommands(): Promise<string> {
  const block = (text: string) => /<!-- install-commands[^\n]*-->\n```sh\n([\s\S]*?)```/.exec(text)?.[1];
  const guide = block(await readFile(join(WORKSPACE_ROOT, 'docs/guides/client.md'), 'utf8'));
  expect(guide, 'docs/guides/client.md: a ```sh block after <!-- install-commands -->').toBeDefined();
  expect(block(await readFile(join(WORKSPACE_ROOT, 'packages/client/README.md'), 'utf8')), 'packages/client/README.md shows the same install commands').toBe(guide);
  return guide!.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#')).join('\n');
}

const tsconfig = (options: Record<string, unknown>, files: string[]) =>
  JSON.stringify({
    compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, types: [], skipLibCheck: false, ...options },
    files,
  });

describe('consumer project (packed tarballs, outside the workspace)', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('installs, type-checks and runs against the server', { timeout: 180_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'payorch-consumer-'));
    const timings: Record<string, string> = {};
    const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await fn();
      } finally {
        timings[name] = `${((performance.now() - started) / 1000).toFixed(1)} s`;
      }
    };

    // 1–2. The install commands of the client guide (docs/guides/client.md, its `install` block; the client's
    // README shows the same block), run as written from the workspace root, the reader's app being a fresh
    // project in a temporary folder: npm pack of the client alone, then npm install of the tarball
    // (openapi-fetch from the npm cache or registry). `npm_config_prefer_offline` only says to use the cache first.
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'payorch-consumer', private: true, type: 'module' }));
    const commands = await installCommands();
    expect(commands).toContain(APP_DIR);
    await step('the guide\'s install commands (npm pack, npm install)', () =>
      run('sh', ['-ec', commands.replaceAll(APP_DIR, dir!)], { cwd: WORKSPACE_ROOT, env: cleanEnv({ npm_config_prefer_offline: 'true', npm_config_loglevel: 'error' }) }),
    );
    const consumer = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const filename = /^file:(?:\.\/)?(payorch-client-[\w.-]+\.tgz)$/.exec(consumer.dependencies?.['@payorch/client'] ?? '')?.[1];
    expect(filename, `the app depends on the packed tarball: ${JSON.stringify(consumer.dependencies)}`).toBeDefined();
    const { stdout: listing } = await run('tar', ['-tzf', join(dir, filename!)]);
    const clientFiles = listing.trim().split('\n').map((f) => f.replace(/^package\//, ''));
    const client = { filename: filename!, size: (await stat(join(dir, filename!))).size, files: clientFiles };
    expect(clientFiles).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts', 'dist/types/index.d.ts', 'dist/types/generated/openapi.d.ts', 'dist/types/generated/webhook-events.d.ts']),
    );
    expect(clientFiles.filter((f) => f.startsWith('test/') || f.startsWith('scripts/') || f.includes('tsconfig'))).toEqual([]);
    const installed = JSON.parse(await readFile(join(dir, 'node_modules/@payorch/client/package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    expect(installed.version).toBe('0.1.0');
    expect(Object.keys({ ...installed.dependencies, ...installed.peerDependencies })).toEqual(['openapi-fetch']);
    // nothing else of payorch was needed or installed
    expect(existsSync(join(dir, 'node_modules/@payorch/types'))).toBe(false);
    // resolved inside the consumer, not through the workspace
    await expect(readFile(join(dir, 'node_modules/openapi-fetch/package.json'), 'utf8')).resolves.toContain('"name": "openapi-fetch"');

    // 3. Type-check: NodeNext (emitting the script) and Bundler resolution; every README snippet too.
    await writeFile(join(dir, 'consumer.ts'), CONSUMER_TS);
    const snippets = await readmeSnippets();
    // every opening fence was extracted (indented ones too)
    const fences = await Promise.all(README_FILES.map(async (f) => (await readFile(join(WORKSPACE_ROOT, f), 'utf8')).match(/^\s*```(?:ts|typescript)$/gm)?.length ?? 0));
    expect(snippets.length).toBe(fences.reduce((a, b) => a + b, 0));
    expect(snippets.length).toBeGreaterThan(0);
    await writeFile(join(dir, 'readme-env.d.ts'), README_ENV);
    const snippetFiles = await Promise.all(
      snippets.map(async (snippet, i) => {
        await writeFile(join(dir!, `readme-${i + 1}.ts`), snippet.code);
        return `readme-${i + 1}.ts`;
      }),
    );
    const sources = ['consumer.ts', 'readme-env.d.ts', ...snippetFiles];
    await writeFile(join(dir, 'tsconfig.json'), tsconfig({ module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out' }, sources));
    // The library check (skipLibCheck: false: our .d.ts and their dependencies') runs once, under NodeNext.
    await writeFile(join(dir, 'tsconfig.bundler.json'), tsconfig({ module: 'ESNext', moduleResolution: 'Bundler', noEmit: true, skipLibCheck: true }, sources));
    const tsc = async (project: string) => {
      try {
        await run(process.execPath, [TSC, '-p', project], { cwd: dir! });
      } catch (err) {
        throw new Error(`tsc -p ${project} failed:\n${(err as { stdout?: string }).stdout ?? err}`);
      }
    };
    await Promise.all([step(`tsc (NodeNext, emit, lib check; consumer + ${snippets.length} README snippets)`, () => tsc('tsconfig.json')), step('tsc (Bundler)', () => tsc('tsconfig.bundler.json'))]);

    // 4. Run the compiled consumer against the test server.
    await writeFile(join(dir, 'receipt.pdf'), tinyPdf());
    const { baseUrl, sandbox } = server();
    const { stdout } = await step('node out/consumer.js', () =>
      run(process.execPath, ['out/consumer.js'], {
        cwd: dir!,
        env: { PATH: process.env.PATH, PAYORCH_BASE_URL: baseUrl, PAYORCH_PUBLIC_API_KEY: sandbox.public_api_key, PAYORCH_PRIVATE_SECRET_KEY: sandbox.private_secret_key },
      }),
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result).toMatchObject({
      health: { status: 'ok' },
      customer: { id: expect.any(String), first_name: 'Ada' },
      duplicate: { status: 409, code: 'CUSTOMER_ID_DUPLICATED', request_id: expect.any(String) },
      narrowed: 'CUSTOMER_ID_DUPLICATED',
      verified: { type_event: 'payment.succeeded', payment_id: expect.any(String) },
      evidence: { file_name: 'receipt.pdf', bytes: Buffer.from(tinyPdf()).toString('base64').length },
      tooBig: 'PayorchEvidenceError',
    });

    console.info(
      [
        'consumer test:',
        `  packed ${client.filename} ${(client.size / 1024).toFixed(1)} kB (${client.files.length} files)`,
        ...Object.entries(timings).map(([k, v]) => `  ${k}: ${v}`),
        `  consumer output: ${stdout.trim()}`,
      ].join('\n'),
    );
  });
});
