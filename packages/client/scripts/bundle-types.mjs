#!/usr/bin/env node
/**
 * Makes the built client self-contained for publishing (run by `npm run build` after tsc): the type
 * declarations of @payorch/types (the generated API types; the client imports nothing else from it, and
 * only as types) are copied into dist/types/, and the client's own declarations import them from there
 * instead of from the package. So the client tarball installs alone: @payorch/types is a devDependency,
 * never fetched by integrators. Fails if any built file still imports @payorch/types.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@payorch/types';
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const bundled = join(dist, 'types');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

const typesDist = join(dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/openapi.json`)), 'dist');
if (!existsSync(join(typesDist, 'index.d.ts'))) {
  console.error(`${PACKAGE} is not built (${typesDist}/index.d.ts is missing): run \`npm run build -w ${PACKAGE}\` first`);
  process.exit(1);
}
rmSync(bundled, { recursive: true, force: true });
cpSync(typesDist, bundled, { recursive: true, filter: (src) => !src.endsWith('.js') && !src.endsWith('.js.map') && !src.endsWith('.d.ts.map') });

const specifier = new RegExp(`(['"])${PACKAGE.replace('/', '\\/')}\\1`, 'g');
for (const file of files(dist).filter((f) => f.endsWith('.d.ts') && !f.startsWith(bundled + sep))) {
  const text = readFileSync(file, 'utf8');
  let target = relative(dirname(file), join(bundled, 'index.js')).split(sep).join('/');
  if (!target.startsWith('.')) target = `./${target}`;
  const rewritten = text.replace(specifier, `'${target}'`);
  if (rewritten !== text) writeFileSync(file, rewritten);
}

// Any import of it left (a value import would reach the JavaScript too) would fail at the integrator's.
const leftover = files(dist).filter((f) => !f.endsWith('.map') && new RegExp(specifier.source).test(readFileSync(f, 'utf8')));
if (leftover.length > 0) {
  console.error(`still naming ${PACKAGE} after bundling: ${leftover.map((f) => relative(root, f)).join(', ')}`);
  process.exit(1);
}
