/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
/**
 * Runs `attempt(waitLeft)` until it settles with anything but an
 * UnavailableError, or until `deadline` (a performance.now() time) leaves
 * no room for another pause.
 */
export declare function untilDeadline<T>(deadline: number, signal: AbortSignal | undefined, attempt: (waitLeft: number) => Promise<T>): Promise<T>;
