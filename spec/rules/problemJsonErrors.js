// A 4xx/5xx response must offer exactly application/problem+json whose schema is the Problem schema
// (recognised by its RFC 9457 members plus our `code`, since refs are resolved before rules run).
// Result paths are absolute in Spectral (they start with context.path), so a diagnostic points at the
// response's content or schema, in whichever file defines it.
const PROBLEM_MEMBERS = ['type', 'title', 'status', 'code'];

export default function problemJsonErrors(response, _options, context) {
  if (response === null || typeof response !== 'object') return;
  const content = response.content;
  if (!content || typeof content !== 'object') {
    return [{ message: 'Error response has no content; it must be application/problem+json with the Problem schema.' }];
  }
  const types = Object.keys(content);
  if (types.length !== 1 || types[0] !== 'application/problem+json') {
    return [{ message: `Error response offers ${types.join(', ')}; it must offer only application/problem+json.`, path: [...context.path, 'content'] }];
  }
  const schema = content['application/problem+json'].schema;
  const props = schema && typeof schema === 'object' ? schema.properties ?? {} : {};
  const missing = PROBLEM_MEMBERS.filter((m) => !(m in props));
  if (missing.length > 0) {
    return [{ message: `Error response schema is not the Problem schema (missing ${missing.join(', ')}).`, path: [...context.path, 'content', 'application/problem+json', 'schema'] }];
  }
}
