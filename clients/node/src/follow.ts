// Observe and watch (docs/design.md#observe-and-watch): a server stream as
// an async iterator. The call opens on the first next(); leaving the loop
// (break, return, a throw) or aborting `signal` cancels it. These are
// views, not locks: by the time a state arrives it may have changed; only
// a term or a fencing token, checked by the resource, makes a write safe.

import type { ClientReadableStream } from '@grpc/grpc-js';
import { fromStatus } from './errors';
import type { Timestamp } from './gen/google/protobuf/timestamp';
import type { LeaderResponse } from './gen/redlockd/v1/election';
import { type Holder, WatchEvent, type WatchResponse } from './gen/redlockd/v1/lock';

/** Who leads an election, as a majority of the masters agree (leader(), observe()). */
export interface LeaderState {
  /** False when no candidate leads (then the other fields are empty). */
  elected: boolean;
  /** The leader's candidate name. */
  candidate: string;
  /** The value it published. */
  value: Buffer;
  /** Its term, exactly as ELECTED gave it: a bigint, exact above 2^53. */
  term: bigint;
  /** When the term began, on the masters' clocks. */
  since: Date | undefined;
}

/** What a watch saw: the state when it began, then each change. */
export type WatchEventName = 'current' | 'acquired' | 'released' | 'expired' | 'force_released' | 'changed';

/** One message of watch(): what changed, and the state now. */
export interface WatchChange {
  /** `current` first; then `acquired`, `released`, `expired`, `force_released` or `changed` (readers or permits). */
  event: WatchEventName;
  /** Whether a majority holds it now. */
  held: boolean;
  /** Who holds it now (current, acquired), or who held it (released, expired, force_released), as inspect() says. */
  holder: Holder | undefined;
  /** Readers holding it now (a shared lock). */
  readers: number;
  /** A semaphore's permits, and how many are out now. */
  permits: number;
  permitsOut: number;
}

const date = (t: Timestamp | undefined): Date | undefined =>
  t === undefined ? undefined : new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6));

/** A LeaderResponse as a LeaderState. */
export function leaderState(reply: LeaderResponse): LeaderState {
  const { elected, candidate, value, term, since } = reply;
  return { elected, candidate, value, term, since: date(since) };
}

/** A WatchResponse as a WatchChange. */
export function watchChange(reply: WatchResponse): WatchChange {
  const name = String(WatchEvent[reply.event] ?? reply.event).replace(/^WATCH_EVENT_/, '').toLowerCase();
  const { held, holder, readers, permits, permitsOut } = reply;
  return { event: name as WatchEventName, held, holder, readers, permits, permitsOut };
}

/**
 * The messages of the stream `open()` starts, each through `map`; ends
 * when the daemon ends the stream (it shuts down) or `closing` aborts (the
 * client was closed), throws its typed error when it fails, and the
 * signal's reason once `signal` aborts.
 */
export async function* follow<R, T>(
  open: () => ClientReadableStream<R>,
  map: (reply: R) => T,
  signal: AbortSignal | undefined,
  closing: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  signal?.throwIfAborted();
  if (closing.aborted) return;
  const call = open();
  // The cancellation's late 'error' must find a listener once the loop is left.
  call.on('error', () => {});
  const onAbort = () => call.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  closing.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const reply of call as AsyncIterable<R>) yield map(reply);
  } catch (error) {
    signal?.throwIfAborted();
    if (closing.aborted) return;
    throw fromStatus(error);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    closing.removeEventListener('abort', onAbort);
    call.cancel();
  }
}
