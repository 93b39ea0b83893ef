// Work in steps: pure, synchronous code that pauses (`yield`) where its caller may give the event
// loop a turn. The domain decides where a pause is possible; the adapter decides whether to take
// it (admission and the reconciler do once they have held the loop for a slice, see loop-slices.ts).

/** A computation of T that pauses between its steps. */
export type Steps<T> = Generator<void, T, void>;

/** All steps at once, without a pause: for callers with nothing else to serve. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}
