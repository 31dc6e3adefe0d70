/**
 * Auto-pagination. A list method answers a `Paged`: await it for the first page, as before, or walk every
 * item of every page with `for await`, which follows `next_cursor` (as `starting_after`) while `has_more`.
 * The first page is requested once, whichever way it is used.
 */
export interface PageShape {
  has_more?: boolean;
  next_cursor?: string | null;
}

export type Paged<Page, Item> = Promise<Page> & AsyncIterable<Item>;

export function paged<Page extends PageShape, Item>(
  first: Promise<Page>,
  next: (cursor: string) => Promise<Page>,
  items: (page: Page) => readonly Item[],
): Paged<Page, Item> {
  // Iterating handles the first page's failure; a caller who only awaits handles it there.
  const iterate = async function* (): AsyncGenerator<Item> {
    let page = await first;
    for (;;) {
      yield* items(page);
      if (!page.has_more || !page.next_cursor) return;
      page = await next(page.next_cursor);
    }
  };
  return Object.assign(first, { [Symbol.asyncIterator]: iterate });
}
