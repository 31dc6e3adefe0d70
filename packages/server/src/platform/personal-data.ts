/**
 * Personal data, as the spec declares it: `x-personal-data: true` on a schema property (spec/CONVENTIONS.md,
 * "Personal data"; a Spectral rule makes every property of a schema about a person decide). Everything that
 * must know which fields are personal reads it from here, never from a list of its own: what deleting a
 * customer clears (customers/repository.ts), the log fields censored (platform/logger.ts), and the tests'
 * sensitive-data scan.
 */
import { createRequire } from 'node:module';

const KEY = 'x-personal-data';

type SchemaNode = { $ref?: string; type?: string | string[]; oneOf?: SchemaNode[]; anyOf?: SchemaNode[]; properties?: Record<string, SchemaNode>; [k: string]: unknown };
export type SpecWithSchemas = { components?: { schemas?: Record<string, SchemaNode> } };

/** How a personal field is emptied: `null`, or an empty list for a list that cannot be null (metadata). */
export type Cleared = 'null' | 'empty-array';

export interface PersonalField {
  name: string;
  cleared: Cleared | undefined;
}

export interface PersonalData {
  /** Every property name declared personal in any schema. A log field of that name is censored wherever it is. */
  names: readonly string[];
  /** The schema's personal properties (in the spec's order), each with how it is cleared when it can be. */
  fieldsOf(schema: string): readonly PersonalField[];
}

// Names become SQL column names and logger paths: the spec's snake_case rule is relied on, and checked.
const SAFE_NAME = /^[a-z][a-z0-9_]*$/;

/** Reads the declaration from a bundled spec (internal $refs only). */
export function personalDataOf(doc: SpecWithSchemas): PersonalData {
  const schemas = doc.components?.schemas ?? {};
  const deref = (node: SchemaNode | undefined): SchemaNode | undefined => {
    for (let i = 0; i < 16 && typeof node?.$ref === 'string'; i++) node = schemas[node.$ref.replace('#/components/schemas/', '')];
    return node;
  };
  const typesOf = (node: SchemaNode | undefined): string[] => {
    const s = deref(node);
    if (!s) return [];
    const own = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
    return [...own, ...[...(s.oneOf ?? []), ...(s.anyOf ?? [])].flatMap(typesOf)];
  };
  const clearedOf = (node: SchemaNode): Cleared | undefined => {
    const types = typesOf(node);
    if (types.includes('null')) return 'null';
    if (types.includes('array')) return 'empty-array';
    return undefined;
  };

  const bySchema = new Map<string, PersonalField[]>();
  const names = new Set<string>();
  for (const [schemaName, schema] of Object.entries(schemas)) {
    const fields: PersonalField[] = [];
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      if (prop?.[KEY] !== true) continue;
      if (!SAFE_NAME.test(name)) throw new Error(`${schemaName}.${name}: a personal field's name must be snake_case`);
      fields.push({ name, cleared: clearedOf(prop) });
      names.add(name);
    }
    bySchema.set(schemaName, fields);
  }
  return { names: [...names].sort(), fieldsOf: (schema) => bySchema.get(schema) ?? [] };
}

/** The declaration in the spec the server serves (@payorch/types/openapi.json), read once. */
export const PERSONAL_DATA: PersonalData = personalDataOf(createRequire(import.meta.url)('@payorch/types/openapi.json') as SpecWithSchemas);

/**
 * A log object with every member named like a personal field censored, at any depth (to 8 levels):
 * `{ customer: { email: '…' } }` → `{ customer: { email: '[redacted]' } }`. Copies only what it changes;
 * walks plain objects and arrays only (an Error goes to the logger's own redacting serializer intact).
 * A walk, not pino's redact paths: ~30 names at three depths as fast-redact wildcards cost ~6× per line.
 */
export function personalCensor(personal: PersonalData, censor = '[redacted]'): (value: Record<string, unknown>) => Record<string, unknown> {
  const names = new Set(personal.names);
  const walk = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object' || depth > 8) return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      value.forEach((v, i) => {
        const next = walk(v, depth + 1);
        if (next !== v) (out ??= value.slice())[i] = next;
      });
      return out ?? value;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const next = names.has(k) && v !== null && v !== undefined ? censor : walk(v, depth + 1);
      if (next !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
    }
    return out ?? value;
  };
  return (value) => walk(value, 0) as Record<string, unknown>;
}
