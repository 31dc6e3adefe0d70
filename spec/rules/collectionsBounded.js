// Walks one schema (refs already resolved) and reports every array without maxItems and every free-form
// object without maxProperties: request validation collects every error, so an unbounded collection
// lets one small request cost more than its size (issue 12). Free-form: additionalProperties true or a
// schema, or patternProperties. Within a request body an object is free-form too unless it is closed
// (additionalProperties: false), since it then admits any number of members.
const SUBSCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_SINGLE = ['items', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'additionalProperties'];

export default function collectionsBounded(schema, _options, context) {
  const requestBody = context.path.includes('requestBody');
  const results = [];
  walk(schema, [...context.path], results, new Set(), requestBody);
  return results;
}

function walk(schema, path, results, seen, requestBody) {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('array') && schema.maxItems === undefined) {
    results.push({ message: 'Array schema without maxItems.', path });
  }
  if (types.includes('object') && schema.maxProperties === undefined) {
    const extra = schema.additionalProperties;
    const freeForm = extra === true || (extra !== null && typeof extra === 'object') || schema.patternProperties !== undefined;
    if (freeForm) results.push({ message: 'Free-form object schema without maxProperties.', path });
    else if (requestBody && extra !== false) results.push({ message: 'Request object schema neither closed (additionalProperties: false) nor bounded (maxProperties).', path });
  }
  for (const [name, sub] of Object.entries(schema.properties ?? {})) walk(sub, [...path, 'properties', name], results, seen, requestBody);
  for (const [name, sub] of Object.entries(schema.patternProperties ?? {})) walk(sub, [...path, 'patternProperties', name], results, seen, requestBody);
  for (const key of SUBSCHEMA_LISTS) (schema[key] ?? []).forEach((sub, i) => walk(sub, [...path, key, i], results, seen, requestBody));
  for (const key of SUBSCHEMA_SINGLE) if (schema[key]) walk(schema[key], [...path, key], results, seen, requestBody);
}
