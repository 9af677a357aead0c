// Types of @redlockd/client. Durations are milliseconds (as node-redlock);
// fencing tokens are bigints, exact at any size; validUntil is a
// performance.now() deadline counted from when the request was sent.

export interface TlsOptions {
  /** The CA to trust (PEM); unset: the system's roots. */
  ca?: Buffer | string;
  /** Client certificate chain (PEM), for mutual TLS. */
  cert?: Buffer | string;
  /** The client certificate's key (PEM). */
  key?: Buffer | string;
}

export interface ClientOptions {
  /** host:port (or http:// / https://); default REDLOCKD_ADDR, then 127.0.0.1:7420. */
  address?: string;
  /** Bearer token; default REDLOCKD_TOKEN. */
  token?: string;
  /** TLS; default from REDLOCKD_CA, REDLOCKD_CERT, REDLOCKD_KEY (PEM files). */
  tls?: TlsOptions;
}

export interface AcquireOptions {
  /** Time to live in ms (default 10000; null: the daemon's default_ttl). */
  ttl?: number | null;
  /** How long to keep trying, in ms (default 0: one attempt). */
  wait?: number;
  /** A label for logs and Inspect. */
  owner?: string;
}

export interface HoldOptions extends AcquireOptions {
  /** The longest the daemon keeps the lock, in ms from when it was granted. */
  maxHold?: number;
  /** Aborting it gives up the wait, or releases the lock once held. */
  signal?: AbortSignal;
}

export class Client {
  constructor(options?: ClientOptions);
  close(): void;
  /** The lock, or null when someone else kept it all along (contention is a value). */
  acquire(resource: string, options?: AcquireOptions): Promise<Lease | null>;
  /** A Hold session; rejects with NotAcquiredError when the wait runs out. */
  hold(resource: string, options?: HoldOptions): Promise<HeldLock>;
  /** node-redlock's `using`: rejects with LockLostError if the lock was lost, even if the routine succeeded. */
  using<T>(resource: string, options: HoldOptions, routine: (signal: AbortSignal, lock: HeldLock) => Promise<T>): Promise<T>;
  inspect(resource: string): Promise<unknown>;
}

export class Lease implements AsyncDisposable {
  readonly resource: string;
  readonly fencingToken: bigint;
  validUntil: number;
  /** false: the lock is lost. */
  extend(ttl?: number | null): Promise<boolean>;
  /** true: it was still held to the end. */
  release(): Promise<boolean>;
  [Symbol.asyncDispose](): Promise<void>;
}

export class HeldLock implements AsyncDisposable {
  readonly resource: string;
  readonly fencingToken: bigint;
  /** Moves on with every extension the daemon makes. */
  validUntil: number;
  /** Aborted with a LockLostError the moment the lock is lost. */
  readonly signal: AbortSignal;
  readonly lost: boolean;
  /** true: held to the end; rejects with LockLostError when it was lost first. */
  release(): Promise<boolean>;
  [Symbol.asyncDispose](): Promise<void>;
}

export class RedlockdError extends Error {
  /** The gRPC status code, when the daemon answered with one. */
  readonly code?: number;
}
export class InvalidArgumentError extends RedlockdError {}
export class UnavailableError extends RedlockdError {
  /** What each master said, by index. */
  readonly nodes: Record<number, string>;
  readonly needed?: number;
}
export class NotAcquiredError extends RedlockdError {}
export class LockLostError extends RedlockdError {}
export class UnauthenticatedError extends RedlockdError {}
export class PermissionDeniedError extends RedlockdError {}
export class ResourceExhaustedError extends RedlockdError {}
export class DeadlineExceededError extends RedlockdError {}
