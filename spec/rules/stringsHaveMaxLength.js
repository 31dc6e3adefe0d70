// Walks one schema (refs already resolved) and reports every string schema without maxLength.
// An enum or const bounds a string by itself. Example values are not schemas and are skipped.
// Spectral takes a result's `path` as absolute (from the document root, not from the target): each
// starts with context.path, so the diagnostic points at the file, line and property that lack it.
const SUBSCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf'];
const SUBSCHEMA_SINGLE = ['items', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];

export default function stringsHaveMaxLength(schema, _options, context) {
  const results = [];
  walk(schema, [...context.path], results, new Set());
  return results;
}

function walk(schema, path, results, seen) {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined) {
    results.push({ message: 'String schema without maxLength.', path });
  }
  for (const [name, sub] of Object.entries(schema.properties ?? {})) walk(sub, [...path, 'properties', name], results, seen);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    walk(schema.additionalProperties, [...path, 'additionalProperties'], results, seen);
  }
  for (const key of SUBSCHEMA_LISTS) {
    (schema[key] ?? []).forEach((sub, i) => walk(sub, [...path, key, i], results, seen));
  }
  for (const key of SUBSCHEMA_SINGLE) if (schema[key]) walk(schema[key], [...path, key], results, seen);
}
