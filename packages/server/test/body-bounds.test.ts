/**
 * The raw value count that refuses bodies before JSON.parse (src/http/body-bounds.ts): it must see every
 * `[`, `{` and `,` outside strings and none inside, escaped quotes and backslash runs included. Checked
 * against the parsed value on random JSON (fast-check, seeded) and on hand-picked strings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exceedsValueCount } from '../src/http/body-bounds.js';

/** What the scan counts, from the parsed value: each container's opening bracket and the commas between its entries. */
function structuralCount(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const entries = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, entries.length - 1) + entries.reduce<number>((n, e) => n + structuralCount(e), 0);
}

const countOf = (raw: Buffer) => {
  let n = 0;
  while (exceedsValueCount(raw, n)) n++;
  return n;
};

describe('exceedsValueCount', () => {
  it.each([
    ['{}', 1],
    ['[1,2,3]', 3],
    ['{"a,[{":"b,[{"}', 1],
    ['["\\"", ","]', 2],
    ['["\\\\", ","]', 2],
    ['["\\\\\\"],[", 1]', 2],
    ['{"a":[{"b":1},{"c":"}"}]}', 5],
    ['"[,{"', 0],
  ])('%s counts %i', (text, expected) => {
    expect(structuralCount(JSON.parse(text))).toBe(expected);
    expect(countOf(Buffer.from(text))).toBe(expected);
  });

  it('agrees with the parsed value on random JSON, compact and indented', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.boolean(), (value, indent) => {
        const raw = Buffer.from(JSON.stringify(value, null, indent ? 2 : undefined));
        const count = structuralCount(value);
        expect(exceedsValueCount(raw, count)).toBe(false);
        if (count > 0) expect(exceedsValueCount(raw, count - 1)).toBe(true);
      }),
      { seed: 424242, numRuns: 500 },
    );
  });
});
