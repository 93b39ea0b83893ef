// The Go programs report wall-clock (Unix ms) times; the bench times on performance.now(). Their
// offset is read at the moment of the conversion: performance.timeOrigin + now() drifts from the
// wall clock while the system clock is slewed (tens of ms per 20 s seen on a loaded VM), which over
// a run of minutes would shift a Go loop's start by hundreds of ms against the watch's events.
import { performance } from 'node:perf_hooks';

/** `unixMs` (a moment shortly before now) on this process's performance.now() clock. */
export function unixMsToPerformance(unixMs: number): number {
  return unixMs - (Date.now() - performance.now());
}
