// A wait the daemon cuts short with UNAVAILABLE (no quorum of masters, or
// no daemon) is tried again, after a jittered pause, until the caller's
// wait runs out; then the last UnavailableError is thrown.

import { performance } from 'node:perf_hooks';
import { UnavailableError } from './errors';

/** The first pause after UNAVAILABLE, in ms; it doubles up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1000;

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt(waitLeft)` until it settles with anything but an
 * UnavailableError, or until `deadline` (a performance.now() time) leaves
 * no room for another pause.
 */
export async function untilDeadline<T>(
  deadline: number,
  signal: AbortSignal | undefined,
  attempt: (waitLeft: number) => Promise<T>,
): Promise<T> {
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return await attempt(Math.max(0, deadline - performance.now()));
    } catch (error) {
      // Full jitter in [pause/2, pause]: waiters that lost the same quorum
      // do not come back in step.
      const jittered = pause / 2 + Math.random() * (pause / 2);
      if (!(error instanceof UnavailableError) || performance.now() + jittered >= deadline) throw error;
      await sleep(jittered, signal);
    }
  }
}
