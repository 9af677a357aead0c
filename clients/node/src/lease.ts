// A lock taken with Client.acquire(): the caller extends and releases it.

import './polyfill';
import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import { InvalidArgumentError, LockLostError, RedlockdError } from './errors';
import {
  type ExtendRequest,
  type ExtendResponse,
  LockMode,
  type Lease as WireLease,
  type ReleaseManyRequest,
  type ReleaseManyResponse,
  type ReleaseRequest,
  type ReleaseResponse,
} from './gen/redlockd/v1/lock';
import { fromDuration, MAX_SET, millis, toDuration } from './validate';

/** The unary calls a Lease makes, on its client's connection. */
export interface LeaseCalls {
  extend(request: ExtendRequest): Promise<ExtendResponse>;
  release(request: ReleaseRequest): Promise<ReleaseResponse>;
  releaseMany(request: ReleaseManyRequest): Promise<ReleaseManyResponse>;
}

/**
 * A granted lock. Its value (the secret that proves ownership) is kept in a
 * private field: never printed, never in JSON.
 */
export class Lease implements AsyncDisposable {
  /** The locked resource, as requested. */
  readonly resource: string;
  /** Strictly increases per resource (per slot for a permit): send it with every write. A bigint, exact above 2^53. */
  readonly fencingToken: bigint;
  /** True for a shared lock (a reader, taken with `{ shared: true }`); false for an exclusive one. */
  readonly shared: boolean;
  /** For a permit of a semaphore (`{ permits: N }`, N >= 2): N; 0 for a lock. */
  readonly permits: number;
  /** For a permit: the slot it holds, 0 to permits - 1 (its fencing token is the slot's); 0 for a lock. */
  readonly slot: number;
  /**
   * A performance.now() deadline (ms): the lock is guaranteed until then,
   * counted from when the Acquire (or the last Extend) was SENT.
   */
  validUntil: number;
  readonly #value: string;
  readonly #calls: LeaseCalls;
  #ttl: number | undefined;
  #released: Promise<boolean> | undefined;

  /** @internal Made by Client.acquire(). */
  constructor(calls: LeaseCalls, lease: WireLease, sentAt: number, ttl: number | undefined) {
    this.#calls = calls;
    this.#value = lease.value;
    this.#ttl = ttl;
    this.resource = lease.resource;
    this.fencingToken = lease.fencingToken;
    this.shared = lease.mode === LockMode.LOCK_MODE_SHARED;
    this.permits = lease.permits;
    this.slot = lease.slot;
    this.validUntil = sentAt + fromDuration(lease.validity);
  }

  /** Milliseconds of guaranteed hold left (0 once past validUntil). */
  get remaining(): number {
    return Math.max(0, this.validUntil - performance.now());
  }

  /**
   * Resets the lock's time to live to `ttl` ms (default: the TTL it was
   * acquired with) and moves validUntil on. Resolves false when the lock
   * is lost (expired or taken over): stop working under it.
   */
  async extend(ttl: number | undefined = this.#ttl): Promise<boolean> {
    if (ttl !== undefined) millis('ttl', ttl);
    if (this.#released) throw new RedlockdError(`the lease on ${JSON.stringify(this.resource)} was released`);
    const sentAt = performance.now();
    const reply = await this.#calls.extend({
      resource: this.resource,
      value: this.#value,
      ttl: ttl === undefined ? undefined : toDuration(ttl),
    });
    if (reply.extended) {
      this.validUntil = sentAt + fromDuration(reply.validity);
      this.#ttl = ttl;
    } else {
      this.validUntil = Math.min(this.validUntil, performance.now());
    }
    return reply.extended;
  }

  /**
   * Gives the lock back. Resolves true when it was still held to the end,
   * false when it had expired or been taken over meanwhile (work done under
   * it may have overlapped another holder's). Calling it again returns the
   * first answer.
   */
  release(): Promise<boolean> {
    this.#released ??= this.#calls.release({ resource: this.resource, value: this.#value }).then((r) => r.released);
    return this.#released;
  }

  /**
   * @internal Client.releaseMany(): one ReleaseMany for leases of one set
   * (1 to 16, one value). Once it is answered, each lease's release()
   * answers what it said of that lease (one released before keeps its
   * first answer).
   */
  static async releaseMany(calls: LeaseCalls, leases: readonly Lease[]): Promise<boolean> {
    if (!Array.isArray(leases) || !leases.every((lease) => lease instanceof Lease)) {
      throw new InvalidArgumentError('invalid leases: must be an array of Leases (from acquireMany)');
    }
    if (leases.length < 1 || leases.length > MAX_SET) {
      throw new InvalidArgumentError(`invalid leases: ${leases.length} leases; 1 to ${MAX_SET} are allowed`);
    }
    const value = leases[0].#value;
    if (leases.some((lease) => lease.#value !== value)) {
      throw new InvalidArgumentError('invalid leases: they hold more than one value: releaseMany takes leases of one acquireMany');
    }
    const reply = await calls.releaseMany({ resources: leases.map((lease) => lease.resource), value });
    leases.forEach((lease, i) => {
      lease.#released ??= Promise.resolve(reply.members[i] ?? false);
    });
    return reply.released;
  }

  /** `await using`: releases, and throws LockLostError when the lock was not held to the end. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!(await this.release())) {
      throw new LockLostError(
        `the lock on ${JSON.stringify(this.resource)} was not held to the end: it had expired or been taken over`,
      );
    }
  }

  toJSON(): { resource: string; fencingToken: string; shared: boolean; permits: number; slot: number; validUntil: number } {
    return {
      resource: this.resource,
      fencingToken: this.fencingToken.toString(),
      shared: this.shared,
      permits: this.permits,
      slot: this.slot,
      validUntil: this.validUntil,
    };
  }

  [inspect.custom](): string {
    const permit = this.permits >= 2 ? `, permits: ${this.permits}, slot: ${this.slot}` : '';
    return `Lease { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n, shared: ${this.shared}${permit} }`;
  }
}
