/**
 * A lookup table's entry for a key that came from outside (a request, a provider's answer): only the
 * table's own entries. `TABLE[key]` also answers what every object inherits, so "constructor",
 * "toString" or "__proto__" would find a function or Object.prototype instead of nothing (a 500 where a
 * 404 or an "unknown" was meant).
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
