/**
 * JSON parsing that keeps large base64 strings out of V8's heap (issue 26: a dispute's memory).
 *
 * A dispute carries each PDF as a base64 string of up to 1.4 MB. Parsed the usual way, every request makes
 * two such heap strings (the decoded body text, then the member JSON.parse copies out of it), and V8's JSON
 * parser allocates every string of a source over 100 KB directly in the old generation, so each one waits
 * for a full mark-compact: under load the old generation grew ~200 MB before a collection. Here the large
 * string tokens are cut out of the bytes before parsing and put back as Latin-1 strings made straight from
 * the bytes, which Node keeps outside the heap (external strings) from ~1 MB on and in the young generation
 * below that; JSON.parse then sees a body of a few hundred bytes.
 *
 * Only a token that is plainly its own value is cut out: at least LARGE_STRING bytes between unescaped
 * quotes, every byte in the base64 alphabet (so no escape, no control character, no UTF-8 sequence: its
 * Latin-1 reading is its JSON value), not an object key. Everything else, and the grammar around it, is
 * left to JSON.parse, so what this accepts and refuses is exactly what JSON.parse does on the whole text.
 */
import { randomBytes } from 'node:crypto';

/** Bytes a string token needs before it is worth cutting out (smaller ones cost less parsed in place). */
export const LARGE_STRING = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const BASE64_ONLY = /^[A-Za-z0-9+/=]*$/;
const FIRST_VALUE = /^[\x20\x09\x0a\x0d]*([{[])/;

/** Whether the quote at `i` is escaped (an odd run of backslashes before it). */
function escaped(buf: Buffer, i: number): boolean {
  let n = 0;
  while (i - n - 1 >= 0 && buf[i - n - 1] === BACKSLASH) n += 1;
  return n % 2 === 1;
}

function hasBackslash(buf: Buffer, from: number, to: number): boolean {
  const at = buf.indexOf(BACKSLASH, from);
  return at >= 0 && at < to;
}

/** Whether the next byte after `i` that is not JSON white space is a colon (the token was a key). */
function isKey(buf: Buffer, i: number): boolean {
  for (let j = i + 1; j < buf.length; j++) {
    const b = buf[j];
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === COLON;
  }
  return false;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Parses UTF-8 JSON text as body-parser's strict mode does (a leading byte order mark dropped, as its
 * decoder does; an object or an array at the top; an empty body is `{}`), throwing JSON.parse's SyntaxError
 * for invalid text.
 */
export function parseJsonBytes(bytes: Buffer): unknown {
  const buf = bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes;
  if (buf.length === 0) return {};
  const { text, marker, large } = cutLargeStrings(buf);
  if (!FIRST_VALUE.test(text)) {
    // body-parser's strict mode: a JSON text that is not an object or an array is refused.
    throw new SyntaxError('The JSON text is not an object or an array.');
  }
  const parsed: unknown = JSON.parse(text);
  if (large.length > 0) restore(parsed, marker, large);
  return parsed;
}

/** The text with each large base64 string value replaced by `marker` and its index in `large`. */
export function cutLargeStrings(buf: Buffer): { text: string; marker: string; large: string[] } {
  const parts: string[] = [];
  const large: string[] = [];
  // Unguessable per request, so no string a client sends can stand for a cut-out one.
  const marker = `payorch:${randomBytes(12).toString('hex')}:`;
  let copied = 0;
  let pos = 0;
  for (;;) {
    const start = buf.indexOf(QUOTE, pos);
    if (start < 0) break;
    let end = start;
    do end = buf.indexOf(QUOTE, end + 1);
    while (end > 0 && escaped(buf, end));
    if (end < 0) break; // an unterminated string: JSON.parse says so
    if (end - start - 1 >= LARGE_STRING && !hasBackslash(buf, start + 1, end) && !isKey(buf, end)) {
      const value = buf.toString('latin1', start + 1, end);
      if (BASE64_ONLY.test(value)) {
        parts.push(buf.toString('utf8', copied, start + 1), `${marker}${large.length}`);
        large.push(value);
        copied = end;
      }
    }
    pos = end + 1;
  }
  const text = large.length === 0 ? buf.toString('utf8') : parts.join('') + buf.toString('utf8', copied);
  return { text, marker, large };
}

/** Puts the cut-out strings back where their markers are (iteratively: the nesting is the client's). */
function restore(root: unknown, marker: string, large: readonly string[]): void {
  let left = large.length;
  const stack: unknown[] = [root];
  while (stack.length > 0 && left > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const v = record[key];
      if (typeof v === 'string') {
        if (v.startsWith(marker)) {
          record[key] = large[Number(v.slice(marker.length))];
          left -= 1;
        }
      } else if (v !== null && typeof v === 'object') {
        stack.push(v);
      }
    }
  }
}
