/**
 * Runs once per `vitest run`: builds the client (the exports and consumer tests use dist/, with the
 * type declarations bundled as `npm run build` does) and the server when their sources changed, then
 * starts one server for every test file and hands its address and sandbox credentials to the tests
 * through `inject('payorch')`.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { buildIfStale, buildServerIfStale, startServer, type ServerInfo } from './server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    payorch: ServerInfo;
  }
}

const CLIENT_DIR = fileURLToPath(new URL('../..', import.meta.url));

export default async function setup(project: TestProject) {
  buildIfStale(join(CLIENT_DIR, 'tsconfig.json'), join(CLIENT_DIR, 'dist/index.js'), [join(CLIENT_DIR, 'src')]);
  // The last step of the client's build: the @payorch/types declarations into dist/types (cheap, always).
  execFileSync(process.execPath, [join(CLIENT_DIR, 'scripts/bundle-types.mjs')], { stdio: 'inherit' });
  buildServerIfStale();
  const server = await startServer();
  project.provide('payorch', { baseUrl: server.baseUrl, adminApiKey: server.adminApiKey, sandbox: server.sandbox });
  return async () => {
    await server.stop();
  };
}
