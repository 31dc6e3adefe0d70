/**
 * Conditional GETs (RFC 9110 §13): the If-None-Match check of a representation's ETag, for every
 * operation that answers 304 (getPayment, getCustomer). Here in http/ so that no domain imports another for it.
 */

/** If-None-Match (RFC 9110 §13.1.2): `*` or any listed tag, compared weakly, matches. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}
