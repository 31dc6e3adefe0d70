// A 4xx/5xx response must offer exactly application/problem+json whose schema is the Problem schema
// (recognised by its RFC 9457 members plus our `code`, since refs are resolved before rules run).
const PROBLEM_MEMBERS = ['type', 'title', 'status', 'code'];

export default function problemJsonErrors(response) {
  if (response === null || typeof response !== 'object') return;
  const content = response.content;
  if (!content || typeof content !== 'object') {
    return [{ message: 'Error response has no content; it must be application/problem+json with the Problem schema.' }];
  }
  const types = Object.keys(content);
  if (types.length !== 1 || types[0] !== 'application/problem+json') {
    return [{ message: `Error response offers ${types.join(', ')}; it must offer only application/problem+json.`, path: ['content'] }];
  }
  const schema = content['application/problem+json'].schema;
  const props = schema && typeof schema === 'object' ? schema.properties ?? {} : {};
  const missing = PROBLEM_MEMBERS.filter((m) => !(m in props));
  if (missing.length > 0) {
    return [{ message: `Error response schema is not the Problem schema (missing ${missing.join(', ')}).`, path: ['content', 'application/problem+json', 'schema'] }];
  }
}
