#!/usr/bin/env node
// Breaking-change detection: compares the spec with the last released contract (the committed
// snapshot spec/released/openapi.json that `npm run release` writes) and lists what would break an
// existing client apart from what is safe. Comparing with a committed file, not with git history,
// makes the check work on `main` itself and in a fresh clone without tags: a commit that breaks the
// contract fails CI until info.version's major goes up (the version policy in spec/CONVENTIONS.md).
//   node tools/breaking-changes.mjs                     working tree vs spec/released/openapi.json
//   node tools/breaking-changes.mjs --baseline <file>   working tree vs another released snapshot
//   node tools/breaking-changes.mjs --base <git-ref>    working tree vs the spec at that ref
//   node tools/breaking-changes.mjs --old a.yaml --new b.yaml   two spec files
//   options: --spec <entry> (default spec/openapi.yaml), --json (machine-readable output)
// Exit 0: nothing to hold back. Exit 1: breaking changes without a new major version, bounds
// introduced on request inputs without a new minor version, or a version lower than the baseline's.
// Exit 2: the tool could not run (no baseline, no such ref, a spec that does not bundle).
//
// Three severities. `breaking`: an existing client can fail (needs a new major). `limit`: an upper
// bound (maxLength, maxItems, maxProperties, maximum) written on a request input that had none. Every
// input must have a limit (CONVENTIONS.md), so an unbounded one is a defect and its bound a security
// fix; the request's body limit bounded it already, but a client that sent more than the new bound now
// gets a 400, so it cannot go in silently: it needs a new minor version and the changelog lists it
// under "Limits introduced". Tightening a bound that was written stays breaking. `safe`: the rest.
//
// Direction matters. A request accepts what clients send: narrowing it (new required field, shorter
// maxLength, fewer enum values, a type removed) breaks them. A response is what clients read:
// removing a field or enum value, or letting a field be absent or of a new type, breaks them.
// The spec at the ref is read with `git ls-tree`/`git show` into a temporary folder; the working
// tree is never touched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.REDOCLY_TELEMETRY ??= 'off';
process.env.REDOCLY_SUPPRESS_UPDATE_NOTICE ??= 'true';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the released contract lives, next to the spec's entry file. */
export const releasedSpecPath = (specEntry) => join(dirname(specEntry), 'released/openapi.json');

/**
 * @typedef {{ kind: string, severity: 'breaking' | 'limit' | 'safe', where: string, message: string }} Change
 */

/** Bundles a (multi-file) spec into one document; $refs to components stay refs. */
export async function bundleSpec(entry) {
  const { bundle, loadConfig } = await import('@redocly/openapi-core');
  const config = await loadConfig({});
  const { bundle: doc, problems } = await bundle({ ref: entry, config, dereference: false });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`${entry} does not bundle:\n${errors.map((p) => `  ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`).join('\n')}`);
  }
  return doc.parsed;
}

// ---------------------------------------------------------------------------------------------
// Comparison

function pointerGet(doc, ref) {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported after bundling: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node, key) => (node == null ? undefined : node[key]), doc);
}

/** Follows $ref chains; sibling keywords of a $ref (OAS 3.1) are kept on top of the target. */
function deref(doc, node) {
  let current = node;
  for (let i = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && i < 32; i++) {
    const { $ref, ...siblings } = current;
    current = { ...pointerGet(doc, $ref), ...siblings };
  }
  return current ?? {};
}

const isNullSchema = (doc, s) => {
  const r = deref(doc, s);
  return r.type === 'null' || (Array.isArray(r.type) && r.type.length === 1 && r.type[0] === 'null') || (r.enum?.length === 1 && r.enum[0] === null);
};

/**
 * A schema in a shape easy to compare: its accepted types (null = any), enum, object members, items
 * and bounds. `oneOf`/`anyOf` with a null branch (how 3.1 writes "nullable") folds into the types.
 */
function normalize(doc, schema) {
  let s = deref(doc, schema);
  let extraNull = false;
  for (const key of ['oneOf', 'anyOf']) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const nonNull = branches.filter((b) => !isNullSchema(doc, b));
    if (nonNull.length < branches.length) extraNull = true;
    if (nonNull.length === 1) {
      const { [key]: _drop, ...rest } = s;
      s = { ...deref(doc, nonNull[0]), ...rest };
    } else {
      s = { ...s, [key]: nonNull };
    }
  }
  let types = s.type === undefined ? null : new Set(Array.isArray(s.type) ? s.type : [s.type]);
  if (types && extraNull) types.add('null');
  const enumValues = s.const !== undefined ? [s.const] : Array.isArray(s.enum) ? s.enum : null;
  return {
    raw: s,
    types,
    enum: enumValues,
    properties: s.properties ?? null,
    required: new Set(s.required ?? []),
    additionalProperties: s.additionalProperties,
    items: s.items,
    variants: s.oneOf ?? s.anyOf ?? null,
    format: s.format,
    pattern: s.pattern,
  };
}

/** Does a schema with `types` accept a value of type `t`? (an integer is a number) */
const accepts = (types, t) => types === null || types.has(t) || (t === 'integer' && types.has('number'));

const UPPER = [
  ['maxLength', 'maxLength'],
  ['maxItems', 'maxItems'],
  ['maxProperties', 'maxProperties'],
];
const LOWER = [
  ['minLength', 'minLength'],
  ['minItems', 'minItems'],
  ['minProperties', 'minProperties'],
];

/** Effective numeric bounds, `exclusive` when the bound itself is not allowed. */
function bound(s, kind) {
  const [inc, exc] = kind === 'min' ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum'];
  const a = typeof s[inc] === 'number' ? { value: s[inc], exclusive: false } : undefined;
  const b = typeof s[exc] === 'number' ? { value: s[exc], exclusive: true } : undefined;
  if (!a) return b;
  if (!b) return a;
  if (kind === 'min') return b.value >= a.value ? b : a;
  return b.value <= a.value ? b : a;
}
const fmtBound = (b, kind) => (b ? `${kind === 'min' ? (b.exclusive ? '>' : '>=') : b.exclusive ? '<' : '<='} ${b.value}` : 'none');
/** -1: new is narrower, 1: new is wider, 0: same. */
function compareBound(o, n, kind) {
  if (!o && !n) return 0;
  if (!o) return -1;
  if (!n) return 1;
  if (o.value === n.value) return o.exclusive === n.exclusive ? 0 : n.exclusive ? -1 : 1;
  const newIsHigher = n.value > o.value;
  return kind === 'min' ? (newIsHigher ? -1 : 1) : newIsHigher ? 1 : -1;
}

class Comparer {
  /** @param {any} oldDoc @param {any} newDoc */
  constructor(oldDoc, newDoc) {
    this.oldDoc = oldDoc;
    this.newDoc = newDoc;
    /** @type {Change[]} */
    this.changes = [];
  }

  emit(severity, kind, where, message) {
    this.changes.push({ kind, severity, where, message });
  }

  /**
   * Compares two schemas where they are used. dir: 'request' (what clients send) or 'response'.
   * `seen` stops on recursive schemas.
   */
  schema(oldS, newS, dir, where, path, seen = new Set()) {
    if (oldS === undefined || newS === undefined) return;
    if (oldS?.$ref && newS?.$ref) {
      const cycleKey = `${oldS.$ref}|${newS.$ref}`;
      if (seen.has(cycleKey)) return;
      seen = new Set(seen).add(cycleKey);
    }
    const o = normalize(this.oldDoc, oldS);
    const n = normalize(this.newDoc, newS);
    const at = `${where} ${path || '/'}`;
    const req = dir === 'request';

    // Types
    if (o.types || n.types) {
      const lost = o.types ? [...o.types].filter((t) => !accepts(n.types, t)) : n.types ? ['any'] : [];
      const gained = n.types ? [...n.types].filter((t) => !accepts(o.types, t)) : o.types ? ['any'] : [];
      const desc = `${o.types ? [...o.types].join('|') : 'any'} → ${n.types ? [...n.types].join('|') : 'any'}`;
      if (req) {
        if (lost.length) this.emit('breaking', 'request-type-narrowed', at, `type ${desc}: ${lost.join(', ')} no longer accepted`);
        else if (gained.length) this.emit('safe', 'request-type-widened', at, `type ${desc}`);
      } else {
        if (gained.length) this.emit('breaking', 'response-type-widened', at, `type ${desc}: clients may now get ${gained.join(', ')}`);
        else if (lost.length) this.emit('safe', 'response-type-narrowed', at, `type ${desc}`);
      }
    }

    // Enums
    const show = (v) => JSON.stringify(v);
    if (o.enum && n.enum) {
      const removed = o.enum.filter((v) => !n.enum.some((w) => show(w) === show(v)));
      const added = n.enum.filter((v) => !o.enum.some((w) => show(w) === show(v)));
      for (const v of removed) this.emit('breaking', `${dir}-enum-value-removed`, at, `enum value ${show(v)} removed`);
      for (const v of added) this.emit('safe', `${dir}-enum-value-added`, at, `enum value ${show(v)} added`);
    } else if (!o.enum && n.enum) {
      if (req) this.emit('breaking', 'request-enum-added', at, `now limited to ${n.enum.map(show).join(', ')}`);
      else this.emit('safe', 'response-enum-added', at, `now limited to ${n.enum.map(show).join(', ')}`);
    } else if (o.enum && !n.enum) {
      if (req) this.emit('safe', 'request-enum-removed', at, 'no longer limited to an enum');
      else this.emit('breaking', 'response-enum-removed', at, `no longer limited to ${o.enum.map(show).join(', ')}`);
    }

    // Length / size bounds
    for (const [kw] of UPPER) this.limit(o.raw[kw], n.raw[kw], kw, 'max', dir, at);
    for (const [kw] of LOWER) this.limit(o.raw[kw], n.raw[kw], kw, 'min', dir, at);
    for (const kind of ['min', 'max']) {
      const ob = bound(o.raw, kind);
      const nb = bound(n.raw, kind);
      const cmp = compareBound(ob, nb, kind);
      if (cmp === 0) continue;
      const msg = `${kind === 'min' ? 'minimum' : 'maximum'} ${fmtBound(ob, kind)} → ${fmtBound(nb, kind)}`;
      if (!req) this.emit('safe', 'response-limit-changed', at, msg);
      else if (kind === 'max' && !ob) this.emit('limit', 'request-limit-added', at, `${msg} (none was written)`);
      else this.emit(cmp < 0 ? 'breaking' : 'safe', cmp < 0 ? 'request-limit-narrowed' : 'request-limit-widened', at, msg);
    }

    // Pattern and format
    for (const kw of ['pattern', 'format']) {
      if (o[kw] === n[kw]) continue;
      const msg = `${kw} ${o[kw] ?? 'none'} → ${n[kw] ?? 'none'}`;
      if (req && n[kw] !== undefined) this.emit('breaking', `request-${kw}-changed`, at, msg);
      else this.emit('safe', `${dir}-${kw}-changed`, at, msg);
    }

    // Object members
    if (o.properties || n.properties) {
      const op = o.properties ?? {};
      const np = n.properties ?? {};
      const child = (name) => `${path}/${name}`;
      for (const name of Object.keys(np)) {
        if (name in op) continue;
        if (req) {
          if (n.required.has(name)) this.emit('breaking', 'request-required-property-added', `${where} ${child(name)}`, `new required field ${name}`);
          else this.emit('safe', 'request-property-added', `${where} ${child(name)}`, `new optional field ${name}`);
        } else {
          this.emit('safe', 'response-property-added', `${where} ${child(name)}`, `new field ${name}`);
        }
      }
      for (const name of Object.keys(op)) {
        if (name in np) continue;
        if (req) {
          // With additionalProperties: false a client still sending it now gets 400.
          if (n.additionalProperties === false) this.emit('breaking', 'request-property-removed', `${where} ${child(name)}`, `field ${name} removed (now rejected as unknown)`);
          else this.emit('safe', 'request-property-removed', `${where} ${child(name)}`, `field ${name} removed (ignored when sent)`);
        } else {
          this.emit('breaking', 'response-property-removed', `${where} ${child(name)}`, `field ${name} removed`);
        }
      }
      for (const name of Object.keys(op)) {
        if (!(name in np)) continue;
        const wasReq = o.required.has(name);
        const isReq = n.required.has(name);
        if (req && !wasReq && isReq) this.emit('breaking', 'request-property-became-required', `${where} ${child(name)}`, `${name} is now required`);
        if (req && wasReq && !isReq) this.emit('safe', 'request-property-became-optional', `${where} ${child(name)}`, `${name} is now optional`);
        if (!req && wasReq && !isReq) this.emit('breaking', 'response-property-became-optional', `${where} ${child(name)}`, `${name} may now be absent`);
        if (!req && !wasReq && isReq) this.emit('safe', 'response-property-became-required', `${where} ${child(name)}`, `${name} is now always present`);
        this.schema(op[name], np[name], dir, where, child(name), seen);
      }
    }
    if (req && o.additionalProperties !== false && n.additionalProperties === false && (o.types?.has('object') || o.properties)) {
      this.emit('breaking', 'request-additional-properties-restricted', at, 'unknown fields are now rejected');
    }

    // Array items
    if (o.items && n.items) this.schema(o.items, n.items, dir, where, `${path}[]`, seen);

    // Alternatives other than null
    if (o.variants || n.variants) {
      const ov = o.variants ?? [];
      const nv = n.variants ?? [];
      if (nv.length < ov.length) this.emit(req ? 'breaking' : 'safe', `${dir}-variant-removed`, at, `alternatives ${ov.length} → ${nv.length}`);
      if (nv.length > ov.length) this.emit(req ? 'safe' : 'breaking', `${dir}-variant-added`, at, `alternatives ${ov.length} → ${nv.length}`);
      for (let i = 0; i < Math.min(ov.length, nv.length); i++) this.schema(ov[i], nv[i], dir, where, `${path}<${i}>`, seen);
    }
  }

  limit(oldV, newV, kw, kind, dir, at) {
    if (oldV === newV) return;
    const narrowed = kind === 'max' ? newV !== undefined && (oldV === undefined || newV < oldV) : newV !== undefined && (oldV === undefined || newV > oldV);
    const msg = `${kw} ${oldV ?? 'none'} → ${newV ?? 'none'}`;
    if (dir !== 'request') this.emit('safe', 'response-limit-changed', at, msg);
    else if (kind === 'max' && oldV === undefined) this.emit('limit', 'request-limit-added', at, `${msg} (none was written)`);
    else this.emit(narrowed ? 'breaking' : 'safe', narrowed ? 'request-limit-narrowed' : 'request-limit-widened', at, msg);
  }
}

/** Operations of a document keyed by `METHOD /normalized/{}/path`. */
function operationsOf(doc) {
  const ops = new Map();
  for (const [template, rawItem] of Object.entries(doc.paths ?? {})) {
    const item = deref(doc, rawItem);
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      ops.set(`${method.toUpperCase()} ${normalizePath(template)}`, { template, method, op, item });
    }
  }
  return ops;
}

const normalizePath = (t) => t.replace(/\{[^}]+\}/g, '{}');
const isSuccess = (status) => /^[23]/.test(status);

function parametersOf(doc, item, op) {
  const map = new Map();
  let pathIndex = 0;
  for (const raw of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
    const p = deref(doc, raw);
    // Path parameters are matched by position: renaming {id} to {customer_id} changes no URL.
    const key = p.in === 'path' ? `path#${pathIndex++}` : `${p.in}:${p.in === 'header' ? p.name.toLowerCase() : p.name}`;
    map.set(key, p);
  }
  // Operation-level parameters override path-level ones of the same name and location.
  return map;
}

/**
 * Compares two bundled OpenAPI documents.
 * @returns {{ breaking: Change[], safe: Change[], oldVersion: string | undefined, newVersion: string | undefined }}
 */
export function diffSpecs(oldDoc, newDoc) {
  const c = new Comparer(oldDoc, newDoc);
  const oldOps = operationsOf(oldDoc);
  const newOps = operationsOf(newDoc);

  const oldPaths = new Set(Object.keys(oldDoc.paths ?? {}).map(normalizePath));
  const newPaths = new Set(Object.keys(newDoc.paths ?? {}).map(normalizePath));
  const templateOf = (doc, norm) => Object.keys(doc.paths ?? {}).find((t) => normalizePath(t) === norm) ?? norm;
  for (const p of oldPaths) {
    if (!newPaths.has(p)) c.emit('breaking', 'path-removed', templateOf(oldDoc, p), `path ${templateOf(oldDoc, p)} removed`);
  }
  for (const p of newPaths) {
    if (!oldPaths.has(p)) c.emit('safe', 'path-added', templateOf(newDoc, p), `path ${templateOf(newDoc, p)} added`);
  }

  for (const [key, o] of oldOps) {
    const n = newOps.get(key);
    const where = `${o.method.toUpperCase()} ${o.template}`;
    if (!n) {
      // A removed path is reported once, not once per operation.
      if (newPaths.has(normalizePath(o.template))) c.emit('breaking', 'operation-removed', where, `operation ${o.op.operationId ?? where} removed`);
      continue;
    }
    compareOperation(c, o, n, where);
  }
  for (const [key, n] of newOps) {
    if (oldOps.has(key) || !oldPaths.has(normalizePath(n.template))) continue;
    c.emit('safe', 'operation-added', `${n.method.toUpperCase()} ${n.template}`, `operation ${n.op.operationId ?? key} added`);
  }
  compareWebhooks(c);

  return {
    breaking: c.changes.filter((x) => x.severity === 'breaking'),
    limits: c.changes.filter((x) => x.severity === 'limit'),
    safe: c.changes.filter((x) => x.severity === 'safe'),
    oldVersion: oldDoc.info?.version,
    newVersion: newDoc.info?.version,
  };
}

/**
 * Webhooks (OAS 3.1 `webhooks`) are requests the service sends and integrators parse: their payload
 * is compared like a response (a removed field or event breaks the receiver, a new one does not).
 */
function compareWebhooks(c) {
  const { oldDoc, newDoc } = c;
  const events = (doc) => new Map(Object.entries(doc.webhooks ?? {}).map(([name, item]) => [name, deref(doc, item).post]));
  const before = events(oldDoc);
  const after = events(newDoc);
  for (const [name, op] of before) {
    const where = `WEBHOOK ${name}`;
    const next = after.get(name);
    if (!next) {
      c.emit('breaking', 'webhook-removed', where, `event ${name} no longer sent`);
      continue;
    }
    const ob = op?.requestBody ? deref(oldDoc, op.requestBody) : {};
    const nb = next.requestBody ? deref(newDoc, next.requestBody) : {};
    for (const [media, content] of Object.entries(ob.content ?? {})) {
      const n = nb.content?.[media];
      if (!n) c.emit('breaking', 'webhook-media-type-removed', where, `${media} no longer sent`);
      else c.schema(content.schema, n.schema, 'response', `${where} payload`, '');
    }
  }
  for (const name of after.keys()) {
    if (!before.has(name)) c.emit('safe', 'webhook-added', `WEBHOOK ${name}`, `event ${name} added`);
  }
}

function compareOperation(c, o, n, where) {
  const { oldDoc, newDoc } = c;
  if (o.op.operationId && n.op.operationId && o.op.operationId !== n.op.operationId) {
    c.emit('breaking', 'operation-id-changed', where, `operationId ${o.op.operationId} → ${n.op.operationId} (generated client names change)`);
  }

  // Parameters
  const op = parametersOf(oldDoc, o.item, o.op);
  const np = parametersOf(newDoc, n.item, n.op);
  const label = (p) => `${where} ${p.in} ${p.name}`;
  for (const [key, p] of np) {
    const before = op.get(key);
    if (!before) {
      if (p.required) c.emit('breaking', 'required-parameter-added', label(p), `new required ${p.in} parameter ${p.name}`);
      else c.emit('safe', 'parameter-added', label(p), `new optional ${p.in} parameter ${p.name}`);
      continue;
    }
    if (!before.required && p.required) c.emit('breaking', 'parameter-became-required', label(p), `${p.in} parameter ${p.name} is now required`);
    if (before.required && !p.required) c.emit('safe', 'parameter-became-optional', label(p), `${p.in} parameter ${p.name} is now optional`);
    c.schema(before.schema, p.schema, 'request', label(p), '');
  }
  for (const [key, p] of op) {
    if (np.has(key)) continue;
    // Unknown query parameters are rejected (400); an unknown header is ignored.
    c.emit(p.in === 'header' ? 'safe' : 'breaking', 'parameter-removed', label(p), `${p.in} parameter ${p.name} removed`);
  }

  // Request body
  const ob = o.op.requestBody ? deref(oldDoc, o.op.requestBody) : undefined;
  const nb = n.op.requestBody ? deref(newDoc, n.op.requestBody) : undefined;
  const bodyWhere = `${where} request body`;
  if (!ob && nb) c.emit(nb.required ? 'breaking' : 'safe', 'request-body-added', bodyWhere, nb.required ? 'a request body is now required' : 'an optional request body was added');
  if (ob && !nb) c.emit('breaking', 'request-body-removed', bodyWhere, 'the request body was removed');
  if (ob && nb) {
    if (!ob.required && nb.required) c.emit('breaking', 'request-body-became-required', bodyWhere, 'the request body is now required');
    for (const [media, content] of Object.entries(ob.content ?? {})) {
      const next = nb.content?.[media];
      if (!next) {
        c.emit('breaking', 'request-media-type-removed', bodyWhere, `${media} no longer accepted`);
        continue;
      }
      c.schema(content.schema, next.schema, 'request', bodyWhere, '');
    }
    for (const media of Object.keys(nb.content ?? {})) {
      if (!ob.content?.[media]) c.emit('safe', 'request-media-type-added', bodyWhere, `${media} now accepted`);
    }
  }

  // Responses
  const or = o.op.responses ?? {};
  const nr = n.op.responses ?? {};
  const removedOk = Object.keys(or).filter((s) => isSuccess(s) && !(s in nr));
  const addedOk = Object.keys(nr).filter((s) => isSuccess(s) && !(s in or));
  if (removedOk.length && addedOk.length) {
    c.emit('breaking', 'success-status-changed', where, `success status ${removedOk.join(', ')} → ${addedOk.join(', ')}`);
  } else {
    for (const s of removedOk) c.emit('breaking', 'success-status-removed', `${where} ${s}`, `success status ${s} removed`);
    for (const s of addedOk) c.emit('safe', 'success-status-added', `${where} ${s}`, `success status ${s} added`);
  }
  for (const s of Object.keys(or)) {
    if (!isSuccess(s) && !(s in nr)) c.emit('safe', 'error-status-removed', `${where} ${s}`, `error status ${s} no longer documented`);
  }
  for (const s of Object.keys(nr)) {
    if (!isSuccess(s) && !(s in or)) c.emit('safe', 'error-status-added', `${where} ${s}`, `error status ${s} documented`);
  }
  for (const s of Object.keys(or)) {
    if (!(s in nr)) continue;
    const oResp = deref(oldDoc, or[s]);
    const nResp = deref(newDoc, nr[s]);
    const respWhere = `${where} ${s} response`;
    for (const [media, content] of Object.entries(oResp.content ?? {})) {
      const next = nResp.content?.[media];
      if (!next) {
        c.emit('breaking', 'response-media-type-removed', respWhere, `${media} no longer returned`);
        continue;
      }
      c.schema(content.schema, next.schema, 'response', `${respWhere} body`, '');
    }
    for (const media of Object.keys(nResp.content ?? {})) {
      if (!oResp.content?.[media]) c.emit('safe', 'response-media-type-added', respWhere, `${media} may now be returned`);
    }
    const oh = Object.fromEntries(Object.entries(oResp.headers ?? {}).map(([k, v]) => [k.toLowerCase(), [k, v]]));
    const nh = Object.fromEntries(Object.entries(nResp.headers ?? {}).map(([k, v]) => [k.toLowerCase(), [k, v]]));
    for (const [lk, [name, h]] of Object.entries(oh)) {
      if (!nh[lk]) {
        c.emit('breaking', 'response-header-removed', `${respWhere} header ${name}`, `header ${name} removed`);
        continue;
      }
      c.schema(deref(oldDoc, h).schema, deref(newDoc, nh[lk][1]).schema, 'response', `${respWhere} header ${name}`, '');
    }
    for (const [lk, [name]] of Object.entries(nh)) {
      if (!oh[lk]) c.emit('safe', 'response-header-added', `${respWhere} header ${name}`, `header ${name} added`);
    }
  }
}

/** `1.2.3` (an optional `v`, a pre-release suffix ignored) → [1, 2, 3]; undefined if not semver. */
export function parseVersion(v) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(String(v ?? '').trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}
/** -1, 0 or 1 as version a is lower than, equal to or higher than b. */
export const compareVersions = (a, b) => {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
};

/**
 * The version policy, for one commit: breaking changes need a new major, bounds introduced on request
 * inputs a new minor (or major), and the version never goes below the baseline's. (Additive changes
 * need no bump per commit; `npm run release` asks for the minor they call for.)
 */
export function verdict(result) {
  const before = parseVersion(result.oldVersion);
  const after = parseVersion(result.newVersion);
  const majorBumped = Boolean(before && after && after[0] > before[0]);
  const minorBumped = Boolean(majorBumped || (before && after && after[0] === before[0] && after[1] > before[1]));
  const versionLowered = Boolean(before && after && compareVersions(after, before) < 0);
  const reasons = [];
  if (result.breaking.length > 0 && !majorBumped) reasons.push(`${result.breaking.length} breaking change(s) without a new major version`);
  if ((result.limits ?? []).length > 0 && !minorBumped) reasons.push(`${result.limits.length} limit(s) introduced without a new minor version`);
  if (versionLowered) reasons.push(`info.version went down`);
  return { fail: reasons.length > 0, majorBumped, minorBumped, reasons };
}

/** A stable one-line id of a change, used by the tests: `kind where`. */
export const changeId = (change) => `${change.kind} ${change.where}`;

// ---------------------------------------------------------------------------------------------
// Git

function git(args, cwd) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
}

function tryGit(args, cwd) {
  try {
    return git(args, cwd).trim();
  } catch {
    return undefined;
  }
}

/**
 * Writes the spec folder as it is at `ref` into a temporary directory (git ls-tree + git show; the
 * working tree and index are not touched) and returns the entry file's path there.
 */
export function extractSpecAtRef(ref, { cwd = root, specEntry = 'spec/openapi.yaml' } = {}) {
  const top = git(['rev-parse', '--show-toplevel'], cwd).trim();
  const entryRel = relative(top, resolve(cwd, specEntry)).split('\\').join('/');
  const folder = dirname(entryRel);
  const files = git(['ls-tree', '-r', '--name-only', '-z', ref, '--', folder === '.' ? entryRel : folder], top)
    .split('\0')
    .filter(Boolean);
  if (!files.includes(entryRel)) return undefined;
  // One `git cat-file --batch` for all files: "<sha> blob <size>\n<content>\n" each, in order.
  const out = execFileSync('git', ['cat-file', '--batch'], {
    cwd: top,
    input: files.map((f) => `${ref}:${f}\n`).join(''),
    maxBuffer: 256 * 1024 * 1024,
  });
  const dir = mkdtempSync(join(tmpdir(), 'payorch-spec-base-'));
  let at = 0;
  for (const file of files) {
    const eol = out.indexOf(0x0a, at);
    const header = out.subarray(at, eol).toString('utf8');
    const size = Number(header.split(' ')[2]);
    if (!/ blob \d+$/.test(header)) throw new Error(`git cat-file: unexpected answer for ${file}: ${header}`);
    const target = join(dir, file);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, out.subarray(eol + 1, eol + 1 + size));
    at = eol + 1 + size + 1;
  }
  return { dir, entry: join(dir, entryRel) };
}

// ---------------------------------------------------------------------------------------------
// CLI

export function parseArgs(argv) {
  const args = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--base') args.base = value();
    else if (a === '--baseline') args.baseline = value();
    else if (a === '--old') args.old = value();
    else if (a === '--new') args.new = value();
    else if (a === '--spec') args.spec = value();
    else if (a === '--json') args.json = true;
    else if (a === '--help' || a === '-h') args.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

function format(result, { baseLabel, verdict: v }) {
  const lines = [];
  const list = (title, changes, mark) => {
    lines.push(`${title} (${changes.length}):`);
    for (const ch of changes) lines.push(`  ${mark} ${ch.kind.padEnd(36)} ${ch.where} — ${ch.message}`);
  };
  lines.push(`Comparing the spec with ${baseLabel}`);
  list('Breaking changes', result.breaking, '✗');
  list('Limits introduced', result.limits, '!');
  list('Safe changes', result.safe, '✓');
  const versions = `info.version ${result.oldVersion ?? '?'} → ${result.newVersion ?? '?'}`;
  if (v.fail) {
    lines.push(`FAIL: ${v.reasons.join('; ')} (${versions}).`);
    if (result.breaking.length > 0 && !v.majorBumped) lines.push("  Keep the old shape, or raise info.version's major.");
    if (result.limits.length > 0 && !v.minorBumped) lines.push("  Raise info.version's minor: the release notes must say that these inputs are now bounded.");
  } else if (result.breaking.length > 0) lines.push(`Breaking changes accepted: the major version went up (${versions}).`);
  else if (result.limits.length > 0) lines.push(`No breaking change; limits accepted with the new minor version (${versions}).`);
  else lines.push(`No breaking change (${versions}).`);
  return lines.join('\n');
}

/** Reads a spec: a released snapshot as it is (already bundled), anything else through the bundler. */
export async function loadSpec(file) {
  if (file.endsWith('.json')) {
    const doc = JSON.parse(await readFile(file, 'utf8'));
    if (!doc.$ref) return doc;
  }
  return bundleSpec(file);
}

/**
 * Chooses what to compare: two files, the spec at a git ref, or (the default) the released snapshot.
 * @returns {Promise<{ oldEntry: string, newEntry: string, baseLabel: string, cleanup?: string } | { none: string }>}
 */
export async function resolveBase(args, cwd) {
  const newEntry = resolve(cwd, args.new ?? args.spec ?? join(tryGit(['rev-parse', '--show-toplevel'], cwd) ?? root, 'spec/openapi.yaml'));
  if (args.old) return { oldEntry: resolve(cwd, args.old), newEntry, baseLabel: relative(cwd, resolve(cwd, args.old)) };
  if (args.base) {
    if (!tryGit(['rev-parse', '--verify', '--quiet', `${args.base}^{commit}`], cwd)) throw new Error(`no such git ref: ${args.base}`);
    const extracted = extractSpecAtRef(args.base, { cwd, specEntry: relative(cwd, newEntry) });
    if (!extracted) return { none: `The spec did not exist at ${args.base}: nothing to compare.` };
    return { oldEntry: extracted.entry, newEntry, baseLabel: args.base, cleanup: extracted.dir };
  }
  const baseline = args.baseline ? resolve(cwd, args.baseline) : releasedSpecPath(newEntry);
  if (!existsSync(baseline)) {
    throw new Error(`no release baseline at ${relative(cwd, baseline) || baseline}: run \`npm run release\` to record the released contract`);
  }
  const version = JSON.parse(await readFile(baseline, 'utf8')).info?.version ?? '?';
  return { oldEntry: baseline, newEntry, baseLabel: `the released contract ${version} (${relative(cwd, baseline)})` };
}

/** The diff between the chosen base and the working spec (parsed CLI args, see resolveBase). */
export async function compareWithBase(args, cwd) {
  const base = await resolveBase(args, cwd);
  if ('none' in base) return base;
  try {
    return { result: diffSpecs(await loadSpec(base.oldEntry), await bundleSpec(base.newEntry)), baseLabel: base.baseLabel };
  } finally {
    if (base.cleanup) rmSync(base.cleanup, { recursive: true, force: true });
  }
}

export async function main(argv = process.argv.slice(2), { cwd = process.cwd(), log = console.log } = {}) {
  const args = parseArgs(argv);
  if (args.help) {
    log('usage: node tools/breaking-changes.mjs [--baseline spec/released/openapi.json | --base <git-ref> | --old a.yaml --new b.yaml] [--spec spec/openapi.yaml] [--json]');
    return 0;
  }
  const compared = await compareWithBase(args, cwd);
  if ('none' in compared) {
    log(compared.none);
    return 0;
  }
  const { result, baseLabel } = compared;
  const v = verdict(result);
  if (args.json) log(JSON.stringify({ base: baseLabel, ...result, ...v }, null, 2));
  else log(format(result, { baseLabel, verdict: v }));
  return v.fail ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`breaking-changes: ${err.message ?? err}`);
      process.exit(2);
    },
  );
}
