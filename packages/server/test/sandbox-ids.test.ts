/**
 * The ids the sandbox makes up (transactions, payment requests, notifications, disputes, chargebacks) never
 * read as card numbers. Plain hex after `sbx_txn_` was all digits about one time in 1,850, and one CI run's
 * teardown scan flagged `sbx_txn_6008804653048664` (Luhn-valid, a 6-prefix) in six tables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxId } from '../src/providers/sandbox/ids.js';
import { findPans } from './support/sensitive-data-scan.js';

const SANDBOX_SRC = join(import.meta.dirname, '../src/providers/sandbox');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('sandbox ids', () => {
  it.each([
    ['the id CI flagged', '6008804653048664'],
    ['all nines', '9999999999999999'],
    ['a Visa test card', '4507990000000002'],
  ])('%s as the random bytes: a letter first, no PAN', (_, hex) => {
    const id = sandboxId('txn', Buffer.from(hex, 'hex'));
    expect(id).toMatch(/^sbx_txn_[a-f][0-9a-f]{15}$/);
    expect(id.slice(9)).toBe(hex.slice(1));
    expect(findPans(id)).toEqual([]);
    expect(findPans(`{"transaction_id":"${id}"}`)).toEqual([]);
  });

  it('10,000 random ids: distinct, none read as a card number', () => {
    const ids = Array.from({ length: 10_000 }, () => sandboxId('pay'));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.flatMap((id) => findPans(id))).toEqual([]);
  });

  it('derived ids (from a hash) take the same form: a 10-byte and a 6-byte one', () => {
    expect(sandboxId('ntf', Buffer.alloc(10, 0x11))).toBe('sbx_ntf_b1111111111111111111');
    expect(sandboxId('cb', Buffer.alloc(6))).toBe('sbx_cb_a00000000000');
  });

  it('every sbx_ id in the sandbox sources is made by sandboxId (no hand-built hex id left)', () => {
    const handBuilt = sourceFiles(SANDBOX_SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/`sbx_[a-z]+_\$\{/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(handBuilt).toEqual([]);
  });
});
