/**
 * Yuno's webhook management API (`/webhooks`): a second view of the webhook endpoints `/webhook-endpoints`
 * manages, over the same rows (one store, two representations). `name` is the endpoint's description,
 * `state` its `enabled`, the trigger lists become its `events` (yuno-triggers.ts); Yuno's delivery headers
 * (api_key → x-api-key, secret → x-secret, hmac_client_secret → x-hmac-signature) are stored sealed
 * and never shown again (`***`). The URL policy, the cap and the Standard Webhooks signing are the
 * endpoints' own (service.ts). Every check runs before any write, in one transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import { toIsoMicros, type Queryable } from '../db/database.js';
import type { FieldError } from '../http/problems.js';
import { accountBelongsTo } from '../tenancy/accounts.js';
import { webhooksRepository as repo, type CredentialKind, type EndpointRow } from './repository.js';
import type { SecretBox } from './secrets.js';
import { addSecret, MAX_ENDPOINTS_PER_ORGANIZATION, type WebhookRules } from './service.js';
import { endpointUrlProblem } from './url-policy.js';
import {
  eventsForTriggers,
  storedTriggers,
  TRIGGER_LISTS,
  triggersForEvents,
  unsupportedTriggers,
  type TriggerList,
  type YunoTriggers,
} from './yuno-triggers.js';

type YunoWebhook = Schemas['YunoWebhook'];
type CreateInput = Schemas['YunoWebhookCreateRequest'];
type UpdateInput = Schemas['YunoWebhookUpdateRequest'];

export type YunoResult<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'invalid'; errors: FieldError[] }
  | { kind: 'unknown-account' }
  | { kind: 'not-found' }
  | { kind: 'name-taken'; detail: string }
  | { kind: 'limit'; detail: string };

const CREDENTIAL_KINDS: readonly CredentialKind[] = ['api_key', 'secret', 'hmac_client_secret'];
/** The sealing context of a credential: bound to its endpoint and kind, apart from the signing secrets' ids (uuids). */
const credentialSlot = (kind: CredentialKind) => `yuno-${kind}`;

export function sealCredential(box: SecretBox, endpointId: string, kind: CredentialKind, value: string) {
  const sealed = box.seal(endpointId, credentialSlot(kind), value);
  return { endpoint_id: endpointId, kind, key_id: sealed.keyId, ciphertext: sealed.ciphertext, iv: sealed.iv, tag: sealed.tag };
}

export function openCredential(box: SecretBox, row: { endpoint_id: string; kind: CredentialKind; key_id: string; ciphertext: Uint8Array; iv: Uint8Array; tag: Uint8Array }): string {
  return box.open(row.endpoint_id, credentialSlot(row.kind), { ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, keyId: row.key_id });
}

function triggersOf(row: EndpointRow): YunoTriggers {
  return storedTriggers(row.yuno_triggers) ?? triggersForEvents(row.events);
}

export function toYunoWebhook(row: EndpointRow, accountId: string, kinds: ReadonlySet<CredentialKind>): YunoWebhook {
  const t = triggersOf(row);
  const masked = (k: CredentialKind) => (kinds.has(k) ? ('***' as const) : null);
  return {
    id: row.id,
    account_id: accountId,
    name: row.description,
    state: row.enabled ? 'ACTIVE' : 'INACTIVE',
    url: row.url,
    api_key: masked('api_key'),
    secret: masked('secret'),
    hmac_client_secret: masked('hmac_client_secret'),
    oauth2_authentication_url: null,
    oauth2_client_secret: null,
    oauth2_client_id: null,
    oauth2_grant_type: null,
    oauth2_scope: null,
    oauth2_authorization_name: null,
    oauth2_include_client_id: false,
    enrollment_triggers: t.enrollment_triggers,
    payment_triggers: t.payment_triggers,
    report_triggers: t.report_triggers,
    subscription_triggers: t.subscription_triggers,
    onboarding_triggers: t.onboarding_triggers,
    renewal_days: t.renewal_days,
    events: row.events as YunoWebhook['events'],
    unsupported_triggers: unsupportedTriggers(t),
    created_at: toIsoMicros(row.created_at),
    updated_at: toIsoMicros(row.updated_at),
  };
}

async function kindsOf(db: Queryable, ids: readonly string[]): Promise<Map<string, Set<CredentialKind>>> {
  const out = new Map<string, Set<CredentialKind>>();
  for (const { endpoint_id, kind } of await repo.credentialKinds(db, ids)) {
    if (!out.has(endpoint_id)) out.set(endpoint_id, new Set());
    out.get(endpoint_id)!.add(kind);
  }
  return out;
}

const view = async (db: Queryable, row: EndpointRow, accountId: string) => toYunoWebhook(row, accountId, (await kindsOf(db, [row.id])).get(row.id) ?? new Set());

/** Yuno's rules on the trigger lists as they will be stored: at least one trigger with a payorch event; renewal_days only with CLOSE_TO_RENEWAL. */
function triggerProblems(t: YunoTriggers, where: '/body'): FieldError[] {
  const total = TRIGGER_LISTS.reduce((n, l) => n + t[l].length, 0);
  if (total === 0) return [{ path: `${where}/payment_triggers`, message: 'at least one trigger is required' }];
  const errors: FieldError[] = [];
  if (eventsForTriggers(t).length === 0) {
    errors.push({
      path: `${where}/payment_triggers`,
      message: `none of the triggers has a payorch event (${unsupportedTriggers(t).join(', ')}); such a webhook would receive nothing`,
    });
  }
  if (t.renewal_days !== null && !(t.subscription_triggers as string[]).includes('CLOSE_TO_RENEWAL')) {
    errors.push({ path: `${where}/renewal_days`, message: 'is only valid when subscription_triggers contains CLOSE_TO_RENEWAL' });
  }
  return errors;
}

const dedupe = <T>(xs: readonly T[] | undefined): T[] => [...new Set(xs ?? [])];

export async function listWebhooks(
  db: Queryable,
  organizationId: string,
  accountId: string,
  state: 'ACTIVE' | 'INACTIVE' | undefined,
): Promise<YunoResult<YunoWebhook[]>> {
  if (!(await accountBelongsTo(db, accountId, organizationId))) return { kind: 'unknown-account' };
  // At most MAX_ENDPOINTS_PER_ORGANIZATION live endpoints: one array, as Yuno answers.
  const rows = (await repo.listEndpoints(db, organizationId, MAX_ENDPOINTS_PER_ORGANIZATION, null)).filter(
    (r) => state === undefined || r.enabled === (state === 'ACTIVE'),
  );
  const kinds = await kindsOf(db, rows.map((r) => r.id));
  return { kind: 'ok', value: rows.map((r) => toYunoWebhook(r, accountId, kinds.get(r.id) ?? new Set())) };
}

export async function getWebhook(db: Queryable, organizationId: string, accountId: string, id: string): Promise<YunoResult<YunoWebhook>> {
  if (!(await accountBelongsTo(db, accountId, organizationId))) return { kind: 'unknown-account' };
  const row = await repo.findEndpoint(db, organizationId, id);
  return row ? { kind: 'ok', value: await view(db, row, accountId) } : { kind: 'not-found' };
}

const nameTaken = (name: string) => ({ kind: 'name-taken' as const, detail: `Another webhook endpoint of the organization is named ${JSON.stringify(name)}.` });

export async function createWebhook(db: Queryable, rules: WebhookRules, organizationId: string, input: CreateInput): Promise<YunoResult<YunoWebhook>> {
  const triggers: YunoTriggers = {
    enrollment_triggers: dedupe(input.enrollment_triggers),
    payment_triggers: dedupe(input.payment_triggers),
    report_triggers: dedupe(input.report_triggers),
    subscription_triggers: dedupe(input.subscription_triggers),
    onboarding_triggers: dedupe(input.onboarding_triggers),
    renewal_days: input.renewal_days ?? null,
  };
  const errors = triggerProblems(triggers, '/body');
  const urlProblem = endpointUrlProblem(input.url, rules.sandbox);
  if (urlProblem) errors.unshift({ path: '/body/url', message: urlProblem });
  if (errors.length > 0) return { kind: 'invalid', errors };
  if (!(await accountBelongsTo(db, input.account_id, organizationId))) return { kind: 'unknown-account' };
  return db.transaction(async (tx): Promise<YunoResult<YunoWebhook>> => {
    // The organization's registration lock: the cap and the name hold under concurrent creations.
    if ((await repo.lockAndCountEndpoints(tx, organizationId)) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
      return { kind: 'limit', detail: `An organization has at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints (disabled ones included); delete one first.` };
    }
    if (await repo.endpointNamed(tx, organizationId, input.name, null)) return nameTaken(input.name);
    const row = await repo.insertEndpoint(tx, {
      id: randomUUID(),
      organization_id: organizationId,
      url: input.url,
      description: input.name,
      events: eventsForTriggers(triggers),
      enabled: true,
      yuno_triggers: triggers,
    });
    await addSecret(tx, rules, row.id);
    for (const kind of CREDENTIAL_KINDS) {
      const value = input[kind];
      if (value !== undefined) await repo.upsertCredential(tx, sealCredential(rules.secrets, row.id, kind, value));
    }
    return { kind: 'ok', value: await view(tx, row, input.account_id) };
  });
}

export async function updateWebhook(
  db: Queryable,
  rules: WebhookRules,
  organizationId: string,
  id: string,
  patch: UpdateInput,
): Promise<YunoResult<YunoWebhook>> {
  if (patch.renewal_days !== undefined && patch.clear_renewal_days !== undefined) {
    return { kind: 'invalid', errors: [{ path: '/body/clear_renewal_days', message: 'send either renewal_days or clear_renewal_days, not both' }] };
  }
  if (patch.url !== undefined) {
    const urlProblem = endpointUrlProblem(patch.url, rules.sandbox);
    if (urlProblem) return { kind: 'invalid', errors: [{ path: '/body/url', message: urlProblem }] };
  }
  if (!(await accountBelongsTo(db, patch.account_id, organizationId))) return { kind: 'unknown-account' };
  return db.transaction(async (tx): Promise<YunoResult<YunoWebhook>> => {
    await repo.lockAndCountEndpoints(tx, organizationId); // serializes renames with creations (unique names)
    const row = await repo.findEndpoint(tx, organizationId, id, true);
    if (!row) return { kind: 'not-found' };
    if (patch.name !== undefined && (await repo.endpointNamed(tx, organizationId, patch.name, id))) return nameTaken(patch.name);
    const listsSent = TRIGGER_LISTS.filter((l) => patch[l] !== undefined);
    const renewalSent = patch.renewal_days !== undefined || patch.clear_renewal_days === true;
    let yunoTriggers: YunoTriggers | undefined;
    if (listsSent.length > 0 || renewalSent) {
      const next = { ...triggersOf(row) } as Record<TriggerList, string[]> & { renewal_days: number | null };
      for (const l of listsSent) next[l] = dedupe(patch[l] as string[]);
      // A subscription list without CLOSE_TO_RENEWAL takes renewal_days away (it would mean nothing).
      if (patch.subscription_triggers !== undefined && !next.subscription_triggers.includes('CLOSE_TO_RENEWAL')) next.renewal_days = null;
      if (patch.renewal_days !== undefined) next.renewal_days = patch.renewal_days;
      if (patch.clear_renewal_days === true) next.renewal_days = null;
      yunoTriggers = next as YunoTriggers;
      const errors = triggerProblems(yunoTriggers, '/body');
      if (errors.length > 0) return { kind: 'invalid', errors };
      // Lists derived from `events` (never given in Yuno's terms) are not stored for a renewal_days change alone.
      if (listsSent.length === 0 && storedTriggers(row.yuno_triggers) === null) yunoTriggers = undefined;
    }
    const updated = await repo.updateEndpoint(tx, organizationId, id, {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.name !== undefined ? { description: patch.name } : {}),
      ...(patch.state !== undefined ? { enabled: patch.state === 'ACTIVE' } : {}),
      ...(yunoTriggers !== undefined ? { yunoTriggers } : {}),
      ...(yunoTriggers !== undefined && listsSent.length > 0 ? { events: eventsForTriggers(yunoTriggers) } : {}),
    });
    if (!updated) return { kind: 'not-found' };
    for (const kind of CREDENTIAL_KINDS) {
      const value = patch[kind];
      if (value !== undefined) await repo.upsertCredential(tx, sealCredential(rules.secrets, id, kind, value));
    }
    return { kind: 'ok', value: await view(tx, updated, patch.account_id) };
  });
}

export async function deleteWebhook(db: Queryable, organizationId: string, accountId: string, id: string): Promise<YunoResult<YunoWebhook>> {
  if (!(await accountBelongsTo(db, accountId, organizationId))) return { kind: 'unknown-account' };
  return db.transaction(async (tx): Promise<YunoResult<YunoWebhook>> => {
    const row = await repo.findEndpoint(tx, organizationId, id, true);
    if (!row) return { kind: 'not-found' };
    const before = await view(tx, row, accountId);
    await repo.deleteEndpoint(tx, organizationId, id);
    return { kind: 'ok', value: before };
  });
}
