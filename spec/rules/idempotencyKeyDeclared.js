// POST/PATCH operations tagged with a money- or vault-moving tag must declare a required
// X-Idempotency-Key header parameter (path-level parameters count as well). An operation marked
// `x-idempotent-by-nature: true` (repeating it changes nothing more, like unenroll) declares it optional.
export default function idempotencyKeyDeclared(operation, options, context) {
  if (operation === null || typeof operation !== 'object') return;
  const tags = Array.isArray(operation.tags) ? operation.tags : [];
  if (!tags.some((t) => options.tags.includes(t))) return;
  const pathItem = context.path.length >= 2 ? lookup(context.document.data, context.path.slice(0, -1)) : undefined;
  const params = [...(operation.parameters ?? []), ...((pathItem && pathItem.parameters) ?? [])];
  const byNature = operation['x-idempotent-by-nature'] === true;
  const ok = params.some(
    (p) => p && p.in === 'header' && typeof p.name === 'string' && p.name.toLowerCase() === 'x-idempotency-key' && (p.required === true || byNature),
  );
  if (!ok) {
    return [{ message: `${operation.operationId ?? 'Operation'} moves money or vault state but does not declare a required X-Idempotency-Key header.` }];
  }
}

function lookup(root, path) {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  return node;
}
