/**
 * Whether an account is one of an organization's: asked by nearly every write (payments, routing, the
 * vault, checkout, webhooks). Accounts are never deleted nor moved to another organization (tenancy's
 * repository has no statement that could), so a "yes" read from the database stays true: it is kept per
 * process, bounded, and saves a round trip on every later request. A "no" is never kept: an account
 * created since (by any instance) is seen at once.
 *
 * The one "yes" that would not stay true is a read inside the very transaction that inserts the account,
 * rolled back afterwards; account creation (tenancy/service.ts) asks nothing of this, and the id of an
 * account whose creation failed was never handed to anyone.
 */
import type { Queryable } from '../db/database.js';
import { tenancyRepository } from './repository.js';

const MAX_KNOWN = 100_000;
const known = new Set<string>();

export async function accountBelongsTo(db: Queryable, accountId: string, organizationId: string): Promise<boolean> {
  const key = `${organizationId}\u0000${accountId}`;
  if (known.has(key)) return true;
  const belongs = await tenancyRepository.accountBelongsTo(db, accountId, organizationId);
  if (belongs) {
    if (known.size >= MAX_KNOWN) known.delete(known.values().next().value!);
    known.add(key);
  }
  return belongs;
}
