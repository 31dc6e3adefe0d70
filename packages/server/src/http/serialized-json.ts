/**
 * A reply body serialized once (issue 26, the read path): an ETag is a hash of the exact JSON sent, so the
 * JSON is made for the hash and the same text is sent, instead of serializing a ~4 KB payment twice per
 * GET. Remembered per body object (WeakMap: gone with the reply).
 */
const texts = new WeakMap<object, string>();

/** The body's JSON, made once and remembered for sendReply. */
export function jsonOf(body: object): string {
  let text = texts.get(body);
  if (text === undefined) texts.set(body, (text = JSON.stringify(body)));
  return text;
}

/** The JSON made for this body already, if any. */
export function serializedJson(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null ? texts.get(body) : undefined;
}
