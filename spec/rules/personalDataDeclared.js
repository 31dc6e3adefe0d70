// Personal data is declared once, in the spec: every property of a schema about a person (the `schemas`
// option, and any schema that already marks one property) carries `x-personal-data: true` or `false`.
// The server derives from it what DELETE /customers/{id} clears and which log fields are censored, and
// the tests' sensitive-data scan what it looks for (spec/CONVENTIONS.md, "Personal data").
//
// A property that is a bare `$ref` carries the decision as a sibling keyword (OAS 3.1 allows it, the
// bundler keeps it), but Spectral's resolved view replaces the whole node with the target: such a
// property's own keywords are read from the unresolved files instead.
const KEY = 'x-personal-data';

export default function personalDataDeclared(schema, options, context) {
  if (schema === null || typeof schema !== 'object') return [];
  const name = context.path[context.path.length - 1];
  const properties = schema.properties ?? {};
  const listed = (options?.schemas ?? []).includes(name);
  const decision = (prop) => {
    const resolved = properties[prop];
    if (resolved !== null && typeof resolved === 'object' && KEY in resolved) return resolved[KEY];
    return unresolvedNode(context, [...context.path, 'properties', prop])?.[KEY];
  };
  const names = Object.keys(properties);
  if (!listed && !names.some((p) => decision(p) !== undefined)) return [];
  const results = [];
  if (listed && names.length === 0) results.push({ message: `${name} describes a person but declares no properties.`, path: [...context.path] });
  for (const prop of names) {
    if (typeof decision(prop) !== 'boolean') {
      results.push({
        message: `${name}.${prop} has no \`${KEY}: true\` or \`false\` (every property of a schema about a person decides).`,
        path: [...context.path, 'properties', prop],
      });
    }
  }
  return results;
}

/** The node at `path` as written, following $refs (across files) on the way but not at the end. */
function unresolvedNode(context, path) {
  const inventory = context.documentInventory;
  const root = { source: inventory?.document?.source ?? '', data: inventory?.document?.data };
  let at = root;
  let node = root.data;
  for (const key of path) {
    for (let i = 0; i < 16 && node !== null && typeof node === 'object' && typeof node.$ref === 'string'; i++) {
      const [file, pointer = ''] = node.$ref.split('#');
      if (file) {
        const source = joinPath(at.source, file);
        at = { source, data: inventory?.referencedDocuments?.[source]?.data };
      }
      node = pointer.split('/').filter(Boolean).reduce((n, seg) => n?.[seg.replaceAll('~1', '/').replaceAll('~0', '~')], at.data);
    }
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  return node !== null && typeof node === 'object' ? node : undefined;
}

/** `ref` relative to the file `from` (POSIX paths; no node:path in a bundled ruleset function). */
function joinPath(from, ref) {
  if (ref.startsWith('/')) return ref;
  const parts = from.split('/').slice(0, -1);
  for (const seg of ref.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.' && seg !== '') parts.push(seg);
  }
  return parts.join('/');
}
