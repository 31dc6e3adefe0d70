/**
 * The client guide's method tables (docs/guides/client.md, after its `client-methods` markers) are the
 * client as built: every resource method is listed once, and each row names the operation the method
 * really calls. The methods are called here with a fetch of our own that records the request (method
 * and path, matched to the spec's path templates) and answers `{}`: nothing leaves the process. A row's
 * arguments are checked too: one per path parameter, and its `{ … }` lists the operation's query
 * parameters (those not given positionally), `?` marking the optional ones.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPayorchAdminClient, createPayorchClient } from '../src/index.js';
import { WORKSPACE_ROOT } from './support/server.js';

type Parameter = { name: string; in: string; required?: boolean };
const spec = JSON.parse(readFileSync(join(WORKSPACE_ROOT, 'packages/types/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: (Parameter | { $ref: string })[] }>>;
  components: { parameters: Record<string, Parameter> };
};
const GUIDE = readFileSync(join(WORKSPACE_ROOT, 'docs/guides/client.md'), 'utf8');
/** Names a `{ … }` argument may hold that are call options, not query parameters. */
const OPTIONS = new Set(['idempotencyKey', 'ifMatch', 'signal']);

interface Row {
  method: string;
  args: string[];
  /** The names inside the row's `{ … }` arguments, `?` kept. */
  braced: string[];
  operation: string;
}

/** The tables after each `<!-- client-methods` marker: [merchant client, admin client]. */
function tables(): Row[][] {
  return GUIDE.split('<!-- client-methods')
    .slice(1)
    .map((part) => {
      const lines = part.split('\n').slice(1);
      expect(lines[0]).toBe('| method | operation |');
      const rows: Row[] = [];
      for (const line of lines.slice(2)) {
        if (!line.startsWith('|')) break;
        const [call, operation] = line.slice(1, -1).split(' | ').map((c) => c.trim());
        const [, method, argList] = /^`([\w.]+)\((.*)\)`/.exec(call!) ?? [];
        expect(method, line).toBeDefined();
        const braced = [...argList!.matchAll(/\{([^}]*)\}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()).filter(Boolean));
        const args = argList!.replace(/\{[^}]*\}/g, '{}').split(',').map((s) => s.trim()).filter(Boolean);
        const op = /^`((?:GET|POST|PATCH|DELETE) \/\S*)`/.exec(operation!)?.[1];
        expect(op, line).toBeDefined();
        rows.push({ method: method!, args, braced, operation: op! });
      }
      return rows;
    });
}

/** `/customers/{customer_id}` for `/customers/abc`; a literal path beats a template (`/customers/list`). */
function templateOf(method: string, path: string): string {
  const matches = Object.keys(spec.paths)
    .filter((t) => spec.paths[t]![method.toLowerCase()])
    .filter((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
  matches.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  return `${method} ${matches[0] ?? path}`;
}

function parametersOf(operation: string) {
  const [method, path] = operation.split(' ');
  // Parameters may be declared on the path (shared by its operations) or on the operation.
  const item = spec.paths[path!]! as Record<string, { parameters?: (Parameter | { $ref: string })[] }> & { parameters?: (Parameter | { $ref: string })[] };
  const params = [...(item.parameters ?? []), ...(item[method!.toLowerCase()]!.parameters ?? [])].map((p) => ('$ref' in p ? spec.components.parameters[p.$ref.split('/').pop()!]! : p));
  return { path: params.filter((p) => p.in === 'path'), query: params.filter((p) => p.in === 'query') };
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** What each resource method calls: the client's own request, recorded by the fetch it was given. */
async function operationsOf(client: Record<string, unknown>, rows: Row[], calls: string[]) {
  const called = new Map<string, string>();
  for (const row of rows) {
    const [group, name] = row.method.split('.');
    const fn = (client[group!] as Record<string, unknown> | undefined)?.[name!];
    if (typeof fn !== 'function') continue;
    // Ids are placeholders, a body is `{}`, an options or query argument is left out.
    const args = row.args.map((a, i) => (a.startsWith('body') ? {} : a === '{}' ? undefined : `p${i}`));
    calls.length = 0;
    await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    expect(calls, row.method).toHaveLength(1);
    called.set(row.method, calls[0]!);
  }
  return called;
}

const methodsOf = (client: Record<string, unknown>) =>
  Object.entries(client)
    .filter(([, v]) => typeof v === 'object' && v !== null)
    .flatMap(([group, v]) => Object.entries(v as Record<string, unknown>).filter(([, f]) => typeof f === 'function').map(([name]) => `${group}.${name}`))
    .sort();

describe('docs/guides/client.md: the method tables are the client’s', () => {
  const calls: string[] = [];
  const fetch = async (request: Request) => {
    calls.push(templateOf(request.method, new URL(request.url).pathname.replace(/^\/v1/, '')));
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const transport = { baseUrl: 'http://payorch.invalid/v1', fetch, maxRetries: 0 };
  const clients = [
    ['merchant', createPayorchClient({ ...transport, publicApiKey: 'pk', privateSecretKey: 'sk' })],
    ['admin', createPayorchAdminClient({ ...transport, adminApiKey: 'admin' })],
  ] as const;
  const documented = tables();

  it('has a table for each client', () => {
    expect(documented).toHaveLength(clients.length);
  });

  it.each(clients.map(([name, client], i) => [name, client, i] as const))('the %s client: every method once, each with the operation it calls', async (_name, client, i) => {
    const rows = documented[i]!;
    const record = client as unknown as Record<string, unknown>;
    expect(rows.map((r) => r.method).sort()).toEqual(methodsOf(record));
    const called = await operationsOf(record, rows, calls);
    for (const row of rows) {
      expect(row.operation, row.method).toBe(called.get(row.method));
      const { path, query } = parametersOf(row.operation);
      const positional = row.args.filter((a) => a !== '{}' && !a.startsWith('body'));
      const byPosition = query.filter((q) => positional.some((a) => snake(a) === q.name));
      expect(positional.length, `${row.method}: one argument per path parameter`).toBe(path.length + byPosition.length);
      const queryNames = query.filter((q) => !byPosition.includes(q)).map((q) => `${q.name}${q.required ? '' : '?'}`);
      expect(row.braced.filter((b) => !OPTIONS.has(b.replace(/\?$/, ''))), `${row.method}: its query parameters`).toEqual(queryNames);
    }
  });
});
