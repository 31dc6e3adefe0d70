/**
 * The bundled spec (packages/types/openapi.json) read as the conformance suites need it: every
 * operation with its parameters, request body and examples, and its documented responses (status,
 * media types, schemas, headers). Derived at run time, so a new operation is covered the moment it is
 * in the spec.
 */
import { createRequire } from 'node:module';
import type { OperationId } from '@payorch/types';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { STORABLE_FORMATS } from '../../../src/http/formats.js';
import { basePath, indexOperations, type OpenApiDocument, type SecurityKind } from '../../../src/http/spec.js';

const require = createRequire(import.meta.url);
export const spec = require('@payorch/types/openapi.json') as OpenApiDocument & { components: Record<string, Record<string, unknown>> };
export const BASE_PATH = basePath(spec);

export type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface SpecParam {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface SpecExample {
  name: string;
  value: unknown;
}

export interface SpecHeader {
  /** `required: true` in the spec: sent on every response of this kind. */
  required: boolean;
  schema: Schema;
}

export interface SpecResponse {
  status: number;
  /** media type → schema */
  content: Record<string, Schema | undefined>;
  /** lower-cased header name → its declaration */
  headers: Record<string, SpecHeader>;
}

export interface SpecOperation {
  operationId: OperationId;
  method: string;
  /** '/customers/{customer_id}/payment-methods' (relative to BASE_PATH) */
  template: string;
  security: SecurityKind;
  idempotent: boolean;
  idempotencyKeyRequired: boolean;
  bodyLimit: number;
  params: SpecParam[];
  body?: { required: boolean; mediaTypes: string[]; schema: Schema; examples: SpecExample[] };
  responses: Map<number, SpecResponse>;
  /** The documented 2xx statuses. */
  success: number[];
  /** Signed like a provider notification (Standard Webhooks headers), not by merchant keys. */
  signed: boolean;
}

/** Follows a local $ref (keeping OAS 3.1 sibling keywords). */
export function deref<T = Schema>(node: unknown): T {
  let current = node as Schema | undefined;
  for (let i = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && i < 32; i++) {
    const { $ref, ...siblings } = current;
    current = { ...pointer($ref as string), ...siblings };
  }
  return (current ?? {}) as T;
}

export function pointer(ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`not a local ref: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], spec) as Schema;
}

/** The component name of a `$ref: '#/components/schemas/Name'`, if that is what the schema is. */
export function componentName(schema: Schema | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
}

function examplesOf(media: Schema): SpecExample[] {
  const out: SpecExample[] = [];
  for (const [name, raw] of Object.entries((media.examples ?? {}) as Record<string, unknown>)) {
    const ex = deref<{ value?: unknown; externalValue?: string }>(raw);
    if ('value' in ex) out.push({ name, value: ex.value });
  }
  if (out.length === 0 && media.example !== undefined) out.push({ name: 'example', value: media.example });
  return out;
}

function buildOperations(): SpecOperation[] {
  return indexOperations(spec).map((info) => {
    const item = spec.paths[info.template] as Schema;
    const op = item[info.method] as Schema;
    const params = [...((item.parameters ?? []) as unknown[]), ...((op.parameters ?? []) as unknown[])].map((p) => {
      const r = deref<SpecParam>(p);
      return { name: r.name, in: r.in, required: r.required === true, schema: r.schema ?? {} };
    });
    let body: SpecOperation['body'];
    if (op.requestBody) {
      const rb = deref(op.requestBody);
      const mediaTypes = Object.keys(rb.content ?? {});
      const json = rb.content?.['application/json'] as Schema | undefined;
      body = { required: rb.required === true, mediaTypes, schema: json?.schema ?? {}, examples: json ? examplesOf(json) : [] };
    }
    const responses = new Map<number, SpecResponse>();
    for (const [status, raw] of Object.entries((op.responses ?? {}) as Record<string, unknown>)) {
      if (!/^\d{3}$/.test(status)) continue;
      const r = deref(raw);
      responses.set(Number(status), {
        status: Number(status),
        content: Object.fromEntries(Object.entries((r.content ?? {}) as Record<string, Schema>).map(([m, c]) => [m, c.schema])),
        headers: Object.fromEntries(
          Object.entries((r.headers ?? {}) as Record<string, unknown>).map(([h, v]) => {
            const header = deref(v);
            return [h.toLowerCase(), { required: header.required === true, schema: deref(header.schema ?? {}) }];
          }),
        ),
      });
    }
    return {
      operationId: info.operationId,
      method: info.method.toUpperCase(),
      template: info.template,
      security: info.security,
      idempotent: info.idempotent,
      idempotencyKeyRequired: info.idempotencyKeyRequired,
      bodyLimit: info.bodyLimit,
      params,
      body,
      responses,
      success: [...responses.keys()].filter((s) => s >= 200 && s < 300).sort(),
      signed: params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'webhook-signature'),
    };
  });
}

export const operations: SpecOperation[] = buildOperations();

export function operation(id: OperationId | string): SpecOperation {
  const op = operations.find((o) => o.operationId === id);
  if (!op) throw new Error(`no operation ${id} in the spec`);
  return op;
}

// One ajv over the whole document, as the server's validator reads it (formats on, 2020-12).
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
for (const [name, format] of Object.entries(STORABLE_FORMATS)) ajv.addFormat(name, format);
ajv.addSchema({ ...spec, $id: 'conformance-spec' }, 'conformance-spec');
const compiled = new WeakMap<object, ValidateFunction>();

/** A validator for a schema taken from the spec (its $refs resolve inside the spec). */
export function validatorFor(schema: Schema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    const name = componentName(schema);
    v = name
      ? ajv.getSchema(`conformance-spec#/components/schemas/${name}`)!
      : ajv.compile(rewriteRefs(schema) as object);
    compiled.set(schema, v);
  }
  return v;
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `conformance-spec${v}` : rewriteRefs(v)]),
  );
}

export function errorsText(v: ValidateFunction): string {
  return ajv.errorsText(v.errors);
}
