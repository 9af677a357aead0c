// The lock of a Hold session: the daemon extends it while the stream lives
// and says LOST the moment it can no longer guarantee it; `signal` aborts
// then (etcd's Session.Done(), node-redlock's `using` signal).

import './polyfill';
import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { fromStatus, LockLostError, NotAcquiredError, RedlockdError } from './errors';
import { HoldEvent, type HoldRequest, type HoldResponse, type HoldStart, LockMode, NodeOutcome } from './gen/redlockd/v1/lock';
import { fromDuration } from './validate';

/** A Hold stream. */
export type HoldStream = ClientDuplexStream<HoldRequest, HoldResponse>;

/** How long release() waits for the daemon's RELEASED before cancelling the stream. */
const RELEASE_CONFIRM_MS = 10_000;

const outcome = (n: NodeOutcome): string => String(NodeOutcome[n] ?? n).replace(/^NODE_OUTCOME_/, '').toLowerCase();

/**
 * Sends `start` on a new Hold stream and resolves once the lock is held.
 * Rejects with NotAcquiredError when the wait runs out, a typed error when
 * the daemon refuses, and the signal's reason when `signal` aborts first.
 */
export function openSession(call: HoldStream, start: HoldStart, signal?: AbortSignal): Promise<HeldLock> {
  return new Promise((resolve, reject) => {
    let lock: HeldLock | undefined;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      call.end();
      call.cancel();
      reject(error);
    };
    const onAbort = () => (lock ? lock._abandon(signal?.reason) : fail(signal?.reason));
    if (signal?.aborted) return fail(signal.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    call.on('data', (reply: HoldResponse) => {
      const receivedAt = performance.now();
      if (lock) return lock._event(reply, receivedAt);
      if (reply.event === HoldEvent.HOLD_EVENT_ACQUIRED && reply.lease) {
        settled = true;
        const { resource, fencingToken, validity, mode, permits, slot } = reply.lease;
        const shared = mode === LockMode.LOCK_MODE_SHARED;
        lock = new HeldLock(call, resource, fencingToken, receivedAt + fromDuration(validity), shared, permits, slot);
        lock._whenEnded(() => signal?.removeEventListener('abort', onAbort));
        resolve(lock);
      } else if (reply.event === HoldEvent.HOLD_EVENT_NOT_ACQUIRED) {
        fail(new NotAcquiredError(start.resource, reply.reason, reply.nodes.map(outcome)));
      } else {
        fail(new RedlockdError(`the session ended before the lock was held: ${reply.reason || reply.event}`));
      }
    });
    // 'error' ends a stream with a non-OK status, 'end' one with OK (after
    // its last message).
    call.on('error', (error) => (lock ? lock._ended(`the session failed: ${fromStatus(error).message}`) : fail(fromStatus(error))));
    call.on('end', () => (lock ? lock._ended('the daemon ended the session') : fail(new RedlockdError('the daemon ended the session before answering'))));
    call.write({ request: { $case: 'start', value: start } });
  });
}

/** A lock a Hold session holds. Made by Client.hold(). */
export class HeldLock implements AsyncDisposable {
  /** The locked resource, as requested. */
  readonly resource: string;
  /** The session's fencing token (it never changes within a session): a bigint, exact above 2^53. */
  readonly fencingToken: bigint;
  /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
  readonly shared: boolean;
  /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
  readonly permits: number;
  /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
  readonly slot: number;
  /**
   * A performance.now() deadline (ms) that moves on with every extension
   * the daemon makes. The daemon says LOST ahead of it; should it fall
   * silent, `signal` aborts at this deadline all the same.
   */
  validUntil: number;
  /**
   * Aborted, with a LockLostError as its reason, the moment the lock is
   * lost; with the caller's reason when the `signal` given to hold() aborts
   * (which releases the lock).
   */
  readonly signal: AbortSignal;
  readonly #call: HoldStream;
  readonly #lost = new AbortController();
  #watchdog: NodeJS.Timeout | undefined;
  #asked = false;
  #heldToEnd: boolean | undefined;
  #ended = false;
  #onEnd: Array<() => void> = [];
  #released: Promise<boolean> | undefined;

  /** @internal */
  constructor(call: HoldStream, resource: string, fencingToken: bigint, validUntil: number, shared = false, permits = 0, slot = 0) {
    this.#call = call;
    this.resource = resource;
    this.fencingToken = fencingToken;
    this.shared = shared;
    this.permits = permits;
    this.slot = slot;
    this.validUntil = validUntil;
    this.signal = this.#lost.signal;
    this.#arm();
  }

  /** Whether the lock was lost. */
  get lost(): boolean {
    return this.signal.aborted;
  }

  /** Milliseconds of guaranteed hold left (0 once lost). */
  get remaining(): number {
    return this.lost ? 0 : Math.max(0, this.validUntil - performance.now());
  }

  #arm(): void {
    clearTimeout(this.#watchdog);
    const left = this.validUntil - performance.now();
    this.#watchdog = setTimeout(() => this.#lose('the validity ran out with no extension from the daemon'), left);
    this.#watchdog.unref();
  }

  #lose(reason: string): void {
    if (!this.lost) {
      this.#lost.abort(new LockLostError(`the lock on ${JSON.stringify(this.resource)} was lost: ${reason}`));
    }
    // Our half too, and for good: the daemon releases when the stream goes.
    this.#finish();
    this.#call.cancel();
  }

  #finish(): void {
    clearTimeout(this.#watchdog);
    if (!this.#ended) {
      this.#ended = true;
      this.#call.end();
      for (const callback of this.#onEnd.splice(0)) callback();
    }
  }

  /** @internal Runs `callback` once the session has ended. */
  _whenEnded(callback: () => void): void {
    if (this.#ended) callback();
    else this.#onEnd.push(callback);
  }

  /** @internal A message of the session after ACQUIRED. */
  _event(reply: HoldResponse, receivedAt: number): void {
    switch (reply.event) {
      case HoldEvent.HOLD_EVENT_EXTENDED:
        this.validUntil = receivedAt + fromDuration(reply.lease?.validity);
        this.#arm();
        break;
      case HoldEvent.HOLD_EVENT_LOST:
        this.#heldToEnd = false;
        this.#lose(reply.reason);
        break;
      case HoldEvent.HOLD_EVENT_RELEASED:
        this.#heldToEnd = reply.heldToEnd;
        // Released without being asked (max_hold used up, the daemon shutting
        // down): for the holder that is a loss.
        if (!this.#asked || !reply.heldToEnd) this.#lose(`released by the daemon: ${reply.reason}`);
        this.#finish();
        break;
      default:
        break;
    }
  }

  /** @internal The caller's signal aborted: whatever works under the lock must stop, and it is released. */
  _abandon(reason: unknown): void {
    if (!this.lost) this.#lost.abort(reason);
    this.release().catch(() => {});
  }

  /** @internal The stream ended (with or without an error). */
  _ended(reason: string): void {
    if (this.#heldToEnd === undefined) {
      this.#heldToEnd = false;
      this.#lose(reason);
    }
    this.#finish();
  }

  /**
   * Gives the lock back and waits for the daemon's word. Resolves true when
   * it was held to the end, false when it was lost first (then `signal` has
   * aborted). Calling it again returns the first answer.
   */
  release(): Promise<boolean> {
    this.#released ??= this.#release();
    return this.#released;
  }

  async #release(): Promise<boolean> {
    if (!this.#ended) {
      this.#asked = true;
      this.#call.write({ request: { $case: 'release', value: {} } });
      this.#call.end();
      let timer: NodeJS.Timeout | undefined;
      const confirmed = await new Promise<boolean>((resolve) => {
        this._whenEnded(() => resolve(true));
        timer = setTimeout(resolve, RELEASE_CONFIRM_MS, false);
      });
      clearTimeout(timer);
      if (!confirmed) {
        this.#call.cancel(); // the daemon releases when the stream is cancelled
        throw new RedlockdError(`the daemon did not confirm the release of ${JSON.stringify(this.resource)} within ${RELEASE_CONFIRM_MS} ms`);
      }
    }
    return this.#heldToEnd === true && !this.lost;
  }

  /** `await using`: releases, and throws LockLostError when the lock was lost. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!(await this.release())) {
      throw this.signal.reason ?? new LockLostError(`the lock on ${JSON.stringify(this.resource)} was not held to the end`);
    }
  }

  toJSON(): { resource: string; fencingToken: string; shared: boolean; permits: number; slot: number; validUntil: number; lost: boolean } {
    return {
      resource: this.resource,
      fencingToken: this.fencingToken.toString(),
      shared: this.shared,
      permits: this.permits,
      slot: this.slot,
      validUntil: this.validUntil,
      lost: this.lost,
    };
  }

  [inspect.custom](): string {
    const permit = this.permits >= 2 ? `, permits: ${this.permits}, slot: ${this.slot}` : '';
    return `HeldLock { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n, shared: ${this.shared}${permit}, lost: ${this.lost} }`;
  }
}
