import type { ClientReadableStream } from '@grpc/grpc-js';
import type { LeaderResponse } from './gen/redlockd/v1/election';
import { type Holder, type WatchResponse } from './gen/redlockd/v1/lock';
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
/** A LeaderResponse as a LeaderState. */
export declare function leaderState(reply: LeaderResponse): LeaderState;
/** A WatchResponse as a WatchChange. */
export declare function watchChange(reply: WatchResponse): WatchChange;
/**
 * The messages of the stream `open()` starts, each through `map`; ends
 * when the daemon ends the stream (it shuts down) or `closing` aborts (the
 * client was closed), throws its typed error when it fails, and the
 * signal's reason once `signal` aborts.
 */
export declare function follow<R, T>(open: () => ClientReadableStream<R>, map: (reply: R) => T, signal: AbortSignal | undefined, closing: AbortSignal): AsyncGenerator<T, void, undefined>;
