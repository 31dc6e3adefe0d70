/**
 * Rate limits count in fixed one-minute windows. A test whose requests must all fall in one window waits
 * for the next minute when fewer than `marginMs` of this one are left; call it right before the requests
 * (after any server start, which can take seconds on a busy machine).
 */
export async function awayFromWindowEdge(marginMs = 15_000): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - marginMs) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
}

const minuteNow = () => Math.floor(Date.now() / 60_000);

/**
 * Runs `burst` so that all its requests fall in one window, however slow the machine: it starts away
 * from the window's edge, and a burst that still crossed into the next minute (its counts split over two
 * windows, so its assertions would not hold) is run again from the start of a fresh minute, where
 * nothing of the earlier try counts. `burst` gets the try's number for names that must not repeat, and
 * makes its assertions after `inOneWindow` returns (a try that crossed is not judged).
 */
export async function inOneWindow<T>(burst: (attempt: number) => Promise<T>, attempts = 3): Promise<T> {
  await awayFromWindowEdge();
  for (let attempt = 0; ; attempt++) {
    const started = minuteNow();
    const result = await burst(attempt);
    if (minuteNow() === started) return result;
    if (attempt + 1 >= attempts) throw new Error(`every one of ${attempts} bursts crossed a minute boundary: the machine is too slow for this test`);
    await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 50));
  }
}
