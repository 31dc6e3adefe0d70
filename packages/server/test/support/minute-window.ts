/**
 * Rate limits count in fixed one-minute windows. A test whose requests must all fall in one window waits
 * for the next minute when fewer than `marginMs` of this one are left; call it right before the requests
 * (after any server start, which can take seconds on a busy machine).
 */
export async function awayFromWindowEdge(marginMs = 15_000): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - marginMs) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
}
