import './polyfill';
import type { ClientDuplexStream } from '@grpc/grpc-js';
/**
 * How long before `validUntil` a silent daemon's session is said lost: 100
 * ms, or a quarter of the validity when that is less. It covers a message's
 * way from the daemon and a late timer on a busy host, so the holder is told
 * before the validity ends; it is below the daemon's own lead (LOST at 3 x
 * node_timeout, 150 ms by default, before the end: docs/design.md#sessions),
 * so the daemon's LOST, which says why, normally comes first.
 */
export declare const LOST_MARGIN_MS = 100;
/** What a Session holds a stream for: a lock (HeldLock) or a leadership (Leadership). */
export declare abstract class Session<Request, Response> {
    #private;
    /**
     * A performance.now() deadline (ms) that moves on with every extension
     * the daemon makes. The daemon says LOST ahead of it; should it fall
     * silent, `signal` aborts LOST_MARGIN_MS (at most a quarter of the
     * validity) before this deadline all the same.
     */
    validUntil: number;
    /** Aborted, with the reason, the moment what the stream holds is lost. */
    readonly signal: AbortSignal;
    /** Whether it was lost. */
    get lost(): boolean;
    /** Milliseconds of guaranteed hold left (0 once lost). */
    get remaining(): number;
}
/**
 * Sends `start` on a new stream and resolves with the session `first`
 * makes of the daemon's first message, or rejects with the error it
 * returns instead; rejects with a typed error when the daemon refuses, and
 * with the signal's reason when `signal` aborts first. Once open, aborting
 * `signal` abandons the session. `noun` names the stream in messages.
 */
export declare function openStream<Request, Response, S extends Session<Request, Response>>(call: ClientDuplexStream<Request, Response>, start: Request, noun: string, signal: AbortSignal | undefined, first: (reply: Response, receivedAt: number) => S | Error): Promise<S>;
