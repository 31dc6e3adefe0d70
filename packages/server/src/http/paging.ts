/**
 * Cursor paging, shared by every list: the repository reads `limit + 1` rows, newest first; the extra row
 * only tells whether another page follows, and the last row shown is the next page's `starting_after`.
 */
export function pageOf<T>(rows: readonly T[], limit: number, cursorOf: (row: T) => string): { items: T[]; has_more: boolean; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { items, has_more: hasMore, next_cursor: hasMore ? cursorOf(items[items.length - 1]!) : null };
}
