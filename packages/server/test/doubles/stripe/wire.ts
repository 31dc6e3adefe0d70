/**
 * How Stripe's API is written on the wire, for the double: form-encoded parameters with bracketed keys
 * (`metadata[payorch_reference]=…`, `expand[0]=latest_charge`), multipart uploads (files.create), and the
 * search query language's `metadata['key']:'value'` clauses.
 */

/** `a[b][c]=v&list[0]=x` → { a: { b: { c: 'v' } }, list: ['x'] } (objects whose keys are 0..n become arrays). */
export function decodeForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      const part = path[i]!;
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[path.at(-1)!] = value;
  }
  return arrays(root) as Record<string, unknown>;
}

function arrays(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, arrays(v)] as const);
  const indexed = entries.length > 0 && entries.every(([k], i) => k === String(i));
  return indexed ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

export interface MultipartPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/** A multipart/form-data body (RFC 7578) → its parts; throws on a malformed body. */
export function decodeMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) throw new Error('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw new Error('multipart body without its boundary');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    at += 2; // CRLF after the delimiter
    const headerEnd = body.indexOf('\r\n\r\n', at);
    const next = body.indexOf(delimiter, at);
    if (headerEnd < 0 || next < 0 || headerEnd > next) throw new Error('malformed multipart part');
    const headers = body.subarray(at, headerEnd).toString('utf8');
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    if (name === undefined) throw new Error('multipart part without a name');
    parts.push({
      name,
      filename: /\bfilename="([^"]*)"/.exec(disposition)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? null,
      data: body.subarray(headerEnd + 4, next - 2), // the part ends with CRLF before the next delimiter
    });
    at = next;
  }
}

/** `metadata['k']:'v' OR metadata['k2']:'v'` → the clauses (AND and OR both supported, not mixed). */
export function decodeSearch(query: string): { clauses: { key: string; value: string }[]; mode: 'AND' | 'OR' } {
  const mode = / OR /.test(query) ? 'OR' : 'AND';
  const clauses = query.split(mode === 'OR' ? / OR / : / AND /).map((clause) => {
    const m = /^\s*metadata\['([^']+)'\]:'([^']*)'\s*$/.exec(clause);
    if (!m) throw new Error(`unsupported search clause: ${clause}`);
    return { key: m[1]!, value: m[2]! };
  });
  return { clauses, mode };
}
