// How long a test waits for something that should happen: an event, a condition, a reply.
//
// It is a bound for hangs, not a speed check. The suite has to pass on two shared cores beside a
// CPU hog, where everything runs five to ten times slower than on an idle machine; a healthy wait
// ends as soon as its condition holds, so a generous bound costs nothing on a run that passes.
// Speed is measured in the benchmarks, never asserted here.
//
// Only for waits that end when something arrives. A negative wait ("nothing arrives within X")
// costs its whole bound on every run: keep those short, or make them structural.
export const PATIENCE_MS = 60_000;

/** Polls `condition` until it holds; gives up, naming `what`, after PATIENCE_MS (a bound for hangs). */
export async function waitUntil(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
