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
 * pino redact paths for the personal names: the field itself, and the field one or two levels down
 * (`{ customer: { email } }`, `{ payment: { customer_payer: { email } } }`). fast-redact's wildcards
 * match one level each; what the server logs is flat (ids, codes, counts), and the sensitive-data scan
 * fails a test run on a personal field left in clear at any depth.
 */
export function personalRedactPaths(personal: PersonalData): string[] {
  return personal.names.flatMap((n) => [n, `*.${n}`, `*.*.${n}`]);
}
