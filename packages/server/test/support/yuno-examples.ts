/**
 * Yuno's published request examples, read at test time from the shared reference files
 * (`../shared/yuno-openapi/` beside the repository; never copied into it), each judged against Yuno's own
 * request schema. The tests send every example to a real server: one valid under Yuno's schema must be
 * accepted as published (placeholders substituted) or refused for a reason the interface spec or the card
 * itself gives.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
/** `shared/` sits beside the clone (CI and the engineers' machines alike); YUNO_OPENAPI_DIR points elsewhere (a git worktree). */
export const YUNO_DIR = process.env.YUNO_OPENAPI_DIR ? resolve(process.env.YUNO_OPENAPI_DIR) : resolve(REPO_ROOT, '../shared/yuno-openapi');

export interface YunoExample {
  name: string;
  value: Record<string, unknown>;
  /** Why Yuno's own schema refuses it; empty when it is valid. */
  schemaErrors: string[];
}

/**
 * Yuno's schema where Yuno's own examples contradict it (docs/yuno-compatibility.md): createPayment's
 * schema requires `checkout`, which all but two of its examples omit; we follow the examples.
 */
const RELAXED_REQUIRED: Record<string, string[]> = { '/payments': ['checkout'] };

export function yunoExamples(file: string, path: string): YunoExample[] {
  const doc = JSON.parse(readFileSync(resolve(YUNO_DIR, file), 'utf8')) as {
    paths: Record<string, { post: { requestBody: { content: Record<string, { schema: Record<string, unknown>; examples: Record<string, { value: unknown }> }> } } }>;
  };
  const content = doc.paths[path]!.post.requestBody.content['application/json']!;
  const schema = structuredClone(content.schema);
  const relaxed = RELAXED_REQUIRED[path] ?? [];
  schema.required = ((schema.required as string[] | undefined) ?? []).filter((r) => !relaxed.includes(r));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate = ajv.compile(schema);
  return Object.entries(content.examples).map(([name, { value }]) => {
    const valid = validate(value);
    const schemaErrors = valid ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
    return { name, value: value as Record<string, unknown>, schemaErrors };
  });
}

/**
 * Whether Yuno's files are beside the repository. A clone on its own (a newcomer's `npm test`) skips the
 * example tests; CI always has `shared/` beside the clone, so there a missing folder fails the run
 * instead of silently dropping the check.
 */
export function yunoFilesPresent(): boolean {
  if (existsSync(YUNO_DIR)) return true;
  if (process.env.CI) throw new Error(`${YUNO_DIR} is missing: CI runs the Yuno example tests against ../shared/yuno-openapi beside the clone`);
  return false;
}

/** A placeholder Yuno writes where an id of the merchant's goes: `<customer_id>`, `{{account-code}}`. */
export const isPlaceholder = (v: unknown): boolean => typeof v === 'string' && (/^<[^>]*>$/.test(v) || /^\{\{[^}]*\}\}$/.test(v));

/** Whether a card's MM/YY expiry (two-digit year) has passed this month. */
export function expired(card: { expiration_month?: unknown; expiration_year?: unknown }, now = new Date()): boolean {
  const year = 2000 + Number(card.expiration_year);
  const month = Number(card.expiration_month);
  return year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1);
}
