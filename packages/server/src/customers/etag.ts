/**
 * Strong ETags of a customer (getCustomer, updateCustomer): a hash of the exact JSON sent. updated_at is
 * part of it and moves on every update, so two states never share a tag.
 */
import { createHash } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { jsonOf } from '../http/serialized-json.js';

export function customerEtag(customer: Schemas['Customer']): string {
  return `"${createHash('sha256').update(jsonOf(customer)).digest('base64url')}"`;
}

/** If-Match (RFC 9110 §13.1.1): `*` or any listed tag, compared strongly (a weak tag never matches). */
export function ifMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim() === etag);
}
