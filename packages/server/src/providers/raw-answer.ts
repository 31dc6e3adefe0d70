/**
 * What is kept of a provider's raw answer (Transaction raw_response, shown with `raw_response=true`): a
 * bounded, redacted copy, never the answer as received. Members named like card data or secrets (number,
 * cvc, password, token, api key, authorization…) are replaced by [REDACTED] whatever their value, and any
 * text that looks like a card number, a key or a token is masked; strings, members, items and depth are
 * capped, and the whole copy stays under MAX_STORED_RAW_ANSWER_BYTES of JSON (what does not fit is left
 * out and `_truncated: true` says so).
 */
import { cleanText, REDACTED, redactText } from './provider-values.js';

/** The most JSON a stored raw answer holds (8 KiB). */
export const MAX_STORED_RAW_ANSWER_BYTES = 8 * 1024;
const MAX_DEPTH = 6;
const MAX_MEMBERS = 50;
const MAX_STRING = 512;
const MAX_KEY = 64;

/** Member names whose values are never kept (compared lower-case, without separators). */
const SENSITIVE_NAME =
  /^(pan|number|cardnumber|accountnumber|primaryaccountnumber|cvc|cvv|cvv2|cvc2|cid|csc|securitycode|cardsecuritycode|pin|pinblock|password|passwd|pwd|expiry|expirydate|expiration|track1|track2|trackdata|magstripe|authorization|proxyauthorization|cookie|setcookie)$|secret|token|apikey|privatekey|credential|signature|bearer|session/;

export const isSensitiveName = (key: string) => SENSITIVE_NAME.test(key.toLowerCase().replace(/[^a-z0-9]/g, ''));

/** The bounded, redacted copy of an answer to store. */
export function boundedRawAnswer(answer: unknown): Record<string, unknown> {
  const budget = { left: MAX_STORED_RAW_ANSWER_BYTES - 32, truncated: false };
  const root = answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? answer : { value: answer };
  const copy = copyObject(root as Record<string, unknown>, 1, budget);
  if (budget.truncated) copy._truncated = true;
  // The estimate is conservative; this is the guarantee.
  return Buffer.byteLength(JSON.stringify(copy)) <= MAX_STORED_RAW_ANSWER_BYTES ? copy : { _truncated: true };
}

interface Budget {
  left: number;
  truncated: boolean;
}

function copyObject(value: Record<string, unknown>, depth: number, budget: Budget): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let members = 0;
  for (const [rawKey, member] of Object.entries(value)) {
    if (members >= MAX_MEMBERS) {
      budget.truncated = true;
      break;
    }
    const key = cleanText(redactText(cleanText(rawKey, 4 * MAX_KEY)), MAX_KEY);
    if (key === '' || key === '_truncated' || Object.hasOwn(out, key)) continue;
    const cost = Buffer.byteLength(key) + 4;
    if (budget.left < cost) {
      budget.truncated = true;
      break;
    }
    budget.left -= cost;
    const copied = isSensitiveName(key) && member !== null ? REDACTED : copyValue(member, depth, budget);
    if (copied === undefined) {
      budget.truncated = true;
      break;
    }
    out[key] = copied;
    members++;
  }
  return out;
}

/** A copy of one value within the budget, or undefined when it does not fit. */
function copyValue(value: unknown, depth: number, budget: Budget): unknown {
  if (value === null || typeof value === 'boolean') return spend(budget, 5) ? value : undefined;
  if (typeof value === 'number') return Number.isFinite(value) && spend(budget, 24) ? value : Number.isFinite(value) ? undefined : null;
  if (typeof value === 'string') {
    const text = cleanText(redactText(cleanText(value, 4 * MAX_STRING)), MAX_STRING);
    return spend(budget, Buffer.byteLength(text) * 2 + 2) ? text : undefined;
  }
  if (typeof value !== 'object') return spend(budget, 5) ? null : undefined;
  if (depth >= MAX_DEPTH) {
    budget.truncated = true;
    return spend(budget, 5) ? null : undefined;
  }
  if (!spend(budget, 2)) return undefined;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value.slice(0, MAX_MEMBERS)) {
      const copied = copyValue(item, depth + 1, budget);
      if (copied === undefined) break;
      out.push(copied);
    }
    if (out.length < value.length) budget.truncated = true;
    return out;
  }
  return copyObject(value as Record<string, unknown>, depth + 1, budget);
}

function spend(budget: Budget, bytes: number): boolean {
  if (budget.left < bytes) return false;
  budget.left -= bytes;
  return true;
}
