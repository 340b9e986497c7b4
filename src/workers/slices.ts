import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Work done on the event loop in slices: call the returned function between steps; once the current slice has run
 * `sliceMs`, it lets the loop turn (other requests, timers, I/O) before the next step. Awaiting a promise alone does
 * not: a chain of already-settled promises (better-sqlite3 answers synchronously) never gives the loop a turn.
 */
export function slicer(sliceMs = 20): () => Promise<void> {
  let started = performance.now();
  return async () => {
    if (performance.now() - started < sliceMs) return;
    await nextTurn();
    started = performance.now();
  };
}
