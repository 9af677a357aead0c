/** What close() needs of a session (session.ts's Session). */
interface Closable {
    _close(reason: string): void;
    _whenEnded(callback: () => void): void;
}
/** The open streams of one Client. */
export declare class OpenStreams {
    #private;
    /** Aborted by close(): follow() ends its iteration when it aborts. */
    get closing(): AbortSignal;
    /**
     * `opening` (a session opening on `call`), tracked: close() cancels the
     * call while it opens, and ends the session once open. Rejects at once
     * after close().
     */
    session<S extends Closable>(call: {
        cancel(): void;
    }, opening: Promise<S>): Promise<S>;
    /** Ends every open session, then every other stream (calls still opening, observe, watch). */
    close(): void;
}
export {};
