// The client: a connection to one redlockd. Durations are milliseconds (as
// node-redlock); fencing tokens are bigints; validity is counted from the
// moment a request was SENT (the proto's client rule).

import { performance } from 'node:perf_hooks';
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { type ClientOptions, connection } from './connection';
import { fromStatus, InvalidArgumentError } from './errors';
import { LockClient, type InspectResponse, type AcquireResponse, type AcquireManyResponse } from './gen/redlockd/v1/lock';
import { type HeldLock, openSession } from './held-lock';
import { Lease, type LeaseCalls } from './lease';
import { untilDeadline } from './retry';
import {
  kind as checkKind,
  millis,
  owner as checkOwner,
  resource as checkResource,
  resources as checkResources,
  toDuration,
} from './validate';

/** Options of Client.acquire(). */
export interface AcquireOptions {
  /** Time to live on the masters, ms (default 10000; the daemon allows 250 to 60000 by default). */
  ttl?: number;
  /** How long to keep trying while someone else holds the lock, ms (default 0: one attempt). */
  wait?: number;
  /** A label for logs and Inspect (a pod name, a job id); never part of the lock's identity. */
  owner?: string;
  /**
   * Take a shared lock (a reader of a read-write lock): readers hold it
   * together; an exclusive lock (the default, a writer) excludes them all.
   * Readers may share a fencing token; a writer's is larger than every
   * earlier reader's.
   */
  shared?: boolean;
  /**
   * One of `permits` permits of a semaphore (2 to the daemon's
   * lock.max_permits, 64 by default; 0 or 1, the default, is a lock): at
   * most that many holders at once. Every holder must ask for the same
   * number (another one rejects with FailedPreconditionError while permits
   * are out). `lease.slot` says which permit; fencing tokens increase per
   * slot. Never shared.
   */
  permits?: number;
  /**
   * A job or trace id (at most 128 bytes) only your own work knows: while
   * the daemon holds the lock for an acquisition with this key, another
   * acquisition with it gets the same lock (the same fencing token) at once
   * and counts up; each release counts one down, and the lock is released
   * at zero. A Hold session is one hold. Per daemon; never logged.
   */
  reentrancyKey?: string;
  /** Aborting it gives up the wait; the promise rejects with its reason. */
  signal?: AbortSignal;
}

/** Options of Client.acquireMany(): a set's locks are exclusive, without permits or a reentrancy key. */
export type AcquireManyOptions = Pick<AcquireOptions, 'ttl' | 'wait' | 'owner' | 'signal'>;

/** Options of Client.hold() and Client.using(). */
export interface HoldOptions extends AcquireOptions {
  /** How long to wait for the lock, ms (default 5000). */
  wait?: number;
  /** The longest the daemon keeps the lock, ms from when it was granted (default: the daemon's max_hold, 1 h). */
  maxHold?: number;
  /** Aborting it gives up the wait; once the lock is held, it aborts `lock.signal` with its reason and releases. */
  signal?: AbortSignal;
}

/** Extra time a unary call may take beyond its wait before its gRPC deadline. */
const CALL_SLACK_MS = 30_000;

/** A connection to one redlockd (or a load balancer in front of several). */
export class Client {
  readonly #stub: InstanceType<typeof LockClient>;
  readonly #metadata: Metadata;
  readonly #calls: LeaseCalls;

  /**
   * Unset options come from REDLOCKD_ADDR (default 127.0.0.1:7420),
   * REDLOCKD_TOKEN and REDLOCKD_CA / REDLOCKD_CERT / REDLOCKD_KEY, as
   * redlockctl reads them. Connects lazily, on the first call.
   */
  constructor(options: ClientOptions = {}) {
    const { address, credentials, metadata } = connection(options);
    this.#stub = new LockClient(address, credentials);
    this.#metadata = metadata;
    this.#calls = {
      extend: (request) => this.#unary('extend', request, 0),
      release: (request) => this.#unary('release', request, 0),
      releaseMany: (request) => this.#unary('releaseMany', request, 0),
    };
  }

  /** Closes the connection; pending calls fail. */
  close(): void {
    this.#stub.close();
  }

  #unary<Q, R>(method: 'acquire' | 'extend' | 'release' | 'inspect' | 'acquireMany' | 'releaseMany', request: Q, waitMs: number, signal?: AbortSignal): Promise<R> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const deadline = new Date(Date.now() + waitMs + CALL_SLACK_MS);
      const onAbort = () => {
        call.cancel();
        reject(signal?.reason);
      };
      const stub = this.#stub as unknown as Record<string, (...args: unknown[]) => { cancel(): void }>;
      const call = stub[method].call(this.#stub, request, this.#metadata, { deadline }, (error: ServiceError | null, reply: R) => {
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(fromStatus(error));
        else resolve(reply);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Takes the lock on `resource`, trying for up to `wait` ms. Resolves to
   * null when someone else kept it all along: contention is a value, not an
   * error. A wait cut short by UNAVAILABLE is retried (jittered) until it
   * runs out, then rejects with UnavailableError.
   */
  async acquire(resource: string, options: AcquireOptions = {}): Promise<Lease | null> {
    const { ttl = 10_000, wait = 0, owner = '', shared, permits, reentrancyKey, signal } = options;
    checkResource(resource);
    checkOwner(owner);
    const kind = checkKind(shared, permits, reentrancyKey);
    millis('ttl', ttl);
    const deadline = performance.now() + millis('wait', wait);
    return untilDeadline(deadline, signal, async (waitLeft) => {
      const sentAt = performance.now();
      const reply = await this.#unary<unknown, AcquireResponse>(
        'acquire',
        { resource, owner, ...kind, ttl: toDuration(ttl), wait: waitLeft > 0 ? toDuration(waitLeft) : undefined },
        waitLeft,
        signal,
      );
      return reply.acquired && reply.lease ? new Lease(this.#calls, reply.lease, sentAt, ttl) : null;
    });
  }

  /**
   * Takes the locks on several resources at once, all or none, trying for
   * up to `wait` ms. `resources`: 1 to 16 names (repeats are dropped).
   * Resolves to one Lease per resource, sorted by resource, or to null when
   * any of them stayed with someone else all along: then none is held, and
   * none was held while waiting (two callers with overlapping sets cannot
   * deadlock). The leases share one value and validity, each with its own
   * fencing token (strictly increasing per resource, like any lock's); each
   * is an ordinary Lease, extended and released on its own, or released
   * together with releaseMany(). A wait cut short by UNAVAILABLE is retried
   * as acquire()'s is.
   */
  async acquireMany(resources: readonly string[], options: AcquireManyOptions = {}): Promise<Lease[] | null> {
    const { ttl = 10_000, wait = 0, owner = '', signal } = options;
    const names = checkResources(resources);
    checkOwner(owner);
    for (const [option, field] of [['shared', 'mode'], ['permits', 'permits'], ['reentrancyKey', 'reentrancy_key']]) {
      if ((options as Record<string, unknown>)[option] !== undefined) {
        throw new InvalidArgumentError(`invalid ${field}: a set's locks are exclusive, without permits or a reentrancy key`);
      }
    }
    millis('ttl', ttl);
    const deadline = performance.now() + millis('wait', wait);
    return untilDeadline(deadline, signal, async (waitLeft) => {
      const sentAt = performance.now();
      const reply = await this.#unary<unknown, AcquireManyResponse>(
        'acquireMany',
        { resources: names, owner, ttl: toDuration(ttl), wait: waitLeft > 0 ? toDuration(waitLeft) : undefined },
        waitLeft,
        signal,
      );
      return reply.acquired ? reply.leases.map((lease) => new Lease(this.#calls, lease, sentAt, ttl)) : null;
    });
  }

  /**
   * Gives back leases of one set (what acquireMany() resolved to, or some
   * of them) in one call. Resolves true when every one was still held to
   * the end; false when any had expired, been taken over or been released
   * already. Each lease's release() then answers for that lease.
   */
  releaseMany(leases: readonly Lease[]): Promise<boolean> {
    return Lease.releaseMany(this.#calls, leases);
  }

  /**
   * Opens a Hold session: resolves once the lock is held; the daemon then
   * extends it for as long as the session lives. Rejects with
   * NotAcquiredError when the wait (default 5000 ms) runs out. `lock.signal`
   * aborts with a LockLostError the moment the lock is lost.
   *
   *     await using lock = await client.hold('orders/42', { ttl: 10_000, wait: 5_000 });
   */
  async hold(resource: string, options: HoldOptions = {}): Promise<HeldLock> {
    const { ttl = 10_000, wait = 5_000, owner = '', maxHold, shared, permits, reentrancyKey, signal } = options;
    checkResource(resource);
    checkOwner(owner);
    const kind = checkKind(shared, permits, reentrancyKey);
    millis('ttl', ttl);
    if (maxHold !== undefined) millis('max_hold', maxHold);
    const deadline = performance.now() + millis('wait', wait);
    return untilDeadline(deadline, signal, (waitLeft) =>
      openSession(
        this.#stub.hold(this.#metadata),
        {
          resource,
          owner,
          ...kind,
          ttl: toDuration(ttl),
          wait: waitLeft > 0 ? toDuration(waitLeft) : undefined,
          maxHold: maxHold === undefined ? undefined : toDuration(maxHold),
        },
        signal,
      ),
    );
  }

  /**
   * node-redlock's `using`: runs `routine(signal, lock)` while a Hold
   * session holds the lock, then releases it. `signal` aborts the moment the
   * lock is lost, and then this rejects with LockLostError even if the
   * routine succeeded. If the routine throws, the lock is released and its
   * error is rethrown.
   */
  async using<T>(resource: string, options: HoldOptions, routine: (signal: AbortSignal, lock: HeldLock) => Promise<T>): Promise<T> {
    const lock = await this.hold(resource, options);
    let result: T;
    try {
      result = await routine(lock.signal, lock);
    } catch (error) {
      await lock.release().catch(() => {});
      throw error;
    }
    await lock[Symbol.asyncDispose]();
    return result;
  }

  /** What the masters hold for `resource` (never lock values). */
  async inspect(resource: string): Promise<InspectResponse> {
    checkResource(resource);
    return this.#unary('inspect', { resource }, 0);
  }
}
