// The lock of a Hold session: the daemon extends it while the stream lives
// and says LOST the moment it can no longer guarantee it; `signal` aborts
// then (etcd's Session.Done(), node-redlock's `using` signal).

import { inspect } from 'node:util';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { LockLostError, NotAcquiredError, RedlockdError } from './errors';
import { HoldEvent, type HoldRequest, type HoldResponse, type HoldStart, LockMode, NodeOutcome } from './gen/redlockd/v1/lock';
import { openStream, Session } from './session';
import { fromDuration } from './validate';

/** A Hold stream. */
export type HoldStream = ClientDuplexStream<HoldRequest, HoldResponse>;

const outcome = (n: NodeOutcome): string => String(NodeOutcome[n] ?? n).replace(/^NODE_OUTCOME_/, '').toLowerCase();

/**
 * Sends `start` on a new Hold stream and resolves once the lock is held.
 * Rejects with NotAcquiredError when the wait runs out, a typed error when
 * the daemon refuses, and the signal's reason when `signal` aborts first.
 */
export function openSession(call: HoldStream, start: HoldStart, signal?: AbortSignal): Promise<HeldLock> {
  const first = { request: { $case: 'start' as const, value: start } };
  return openStream<HoldRequest, HoldResponse, HeldLock>(call, first, 'session', signal, (reply, receivedAt) => {
    if (reply.event === HoldEvent.HOLD_EVENT_ACQUIRED && reply.lease) {
      const { resource, fencingToken, validity, mode, permits, slot } = reply.lease;
      const shared = mode === LockMode.LOCK_MODE_SHARED;
      return new HeldLock(call, resource, fencingToken, receivedAt + fromDuration(validity), shared, permits, slot);
    }
    if (reply.event === HoldEvent.HOLD_EVENT_NOT_ACQUIRED) {
      return new NotAcquiredError(start.resource, reply.reason, reply.nodes.map(outcome));
    }
    return new RedlockdError(`the session ended before the lock was held: ${reply.reason || reply.event}`);
  });
}

/** A lock a Hold session holds. Made by Client.hold(). */
export class HeldLock extends Session<HoldRequest, HoldResponse> implements AsyncDisposable {
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
   * Aborted, with a LockLostError as its reason, the moment the lock is
   * lost; with the caller's reason when the `signal` given to hold() aborts
   * (which releases the lock).
   */
  declare readonly signal: AbortSignal;

  /** @internal */
  constructor(call: HoldStream, resource: string, fencingToken: bigint, validUntil: number, shared = false, permits = 0, slot = 0) {
    super(call, validUntil, { last: { request: { $case: 'release', value: {} } }, what: `the release of ${JSON.stringify(resource)}` });
    this.resource = resource;
    this.fencingToken = fencingToken;
    this.shared = shared;
    this.permits = permits;
    this.slot = slot;
  }

  /** @internal */
  protected lostError(reason: string): LockLostError {
    return new LockLostError(`the lock on ${JSON.stringify(this.resource)} was lost: ${reason}`);
  }

  /** @internal A message of the session after ACQUIRED. */
  _event(reply: HoldResponse, receivedAt: number): void {
    switch (reply.event) {
      case HoldEvent.HOLD_EVENT_EXTENDED:
        return this.extendTo(receivedAt + fromDuration(reply.lease?.validity));
      case HoldEvent.HOLD_EVENT_LOST:
        return this.lostByDaemon(reply.reason);
      case HoldEvent.HOLD_EVENT_RELEASED:
        return this.endedByDaemon(reply.heldToEnd, `released by the daemon: ${reply.reason}`);
      default:
        return;
    }
  }

  /**
   * Gives the lock back and waits for the daemon's word. Resolves true when
   * it was held to the end, false when it was lost first (then `signal` has
   * aborted). Calling it again returns the first answer.
   */
  release(): Promise<boolean> {
    return this.giveBack();
  }

  /** `await using`: releases, and throws LockLostError when the lock was lost. */
  async [Symbol.asyncDispose](): Promise<void> {
    return this.dispose(() => new LockLostError(`the lock on ${JSON.stringify(this.resource)} was not held to the end`));
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
