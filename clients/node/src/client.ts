// The client: a connection to one redlockd. Durations are milliseconds (as
// node-redlock); fencing tokens are bigints; validity is counted from the
// moment a request was SENT (the proto's client rule).

import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { type ClientOptions, connection } from './connection';
import { fromStatus, InvalidArgumentError } from './errors';
import { follow, type LeaderState, leaderState, type WatchChange, watchChange } from './follow';
import { ElectionClient, type LeaderResponse, type ParticipantsResponse } from './gen/redlockd/v1/election';
import { LockClient, type InspectResponse, type AcquireResponse, type AcquireManyResponse } from './gen/redlockd/v1/lock';
import { type HeldLock, openSession } from './held-lock';
import { OpenStreams } from './open-streams';
import { type Leadership, openCampaign } from './leadership';
import { Lease, type LeaseCalls } from './lease';
import { untilDeadline } from './retry';
import { traceContext } from './tracing';
import {
  candidate as checkCandidate,
  election as checkElection,
  electionValue,
  kind as checkKind,
  millis,
  owner as checkOwner,
  resource as checkResource,
  resources as checkResources,
  term as checkTerm,
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
  /**
   * Keep a lease that is never released this long (ms, at most the
   * daemon's lock.max_lock_delay, 60 s) past its validity, through every
   * extend, so the next holder starts only after it: for resources that
   * cannot check fencing tokens. A release frees it at once.
   */
  lockDelay?: number;
  /** Aborting it gives up the wait; the promise rejects with its reason. */
  signal?: AbortSignal;
}

/** Options of Client.acquireMany(): a set's locks are exclusive, without permits, a reentrancy key or a lock delay. */
export type AcquireManyOptions = Pick<AcquireOptions, 'ttl' | 'wait' | 'owner' | 'signal'>;

/** Options of Client.hold() and Client.using(). */
export interface HoldOptions extends AcquireOptions {
  /** How long to wait for the lock, ms (default 5000). */
  wait?: number;
  /** The longest the daemon keeps the lock, ms from when it was granted (default: the daemon's max_hold, 1 h). */
  maxHold?: number;
  /**
   * Keep the lock this long (ms, at most the daemon's lock.max_lock_delay,
   * 60 s) after the session ends without a release (the stream broke, the
   * process died, LOST), so the next holder starts only after it: for
   * resources that cannot check fencing tokens. A release frees it at once.
   */
  lockDelay?: number;
  /** Aborting it gives up the wait; once the lock is held, it aborts `lock.signal` with its reason and releases. */
  signal?: AbortSignal;
}

/** Options of Client.campaign(). */
export interface CampaignOptions {
  /** This candidate's name, 1 to 256 bytes (default: the host name, a pod's name in Kubernetes). */
  candidate?: string;
  /** The value to publish once elected: a string (sent as UTF-8) or bytes, at most 4096 (default empty). */
  value?: string | Uint8Array;
  /** The term's time to live, ms (default 10000); the daemon extends it at about a third of it. */
  ttl?: number;
  /** The longest one term may last, ms (default: the daemon's max_hold); then it counts as lost. */
  maxHold?: number;
  /** As HoldOptions.lockDelay: keep the election's lock this long after a leader vanishes without resigning. */
  lockDelay?: number;
  /** Aborting it withdraws the candidacy; once elected, it aborts `leadership.signal` with its reason and resigns. */
  signal?: AbortSignal;
}

/** Options of Client.observe() and Client.watch(). */
export interface FollowOptions {
  /** Aborting it ends the iteration: the pending next() rejects with its reason. */
  signal?: AbortSignal;
}

/** Extra time a unary call may take beyond its wait before its gRPC deadline. */
const CALL_SLACK_MS = 30_000;

/** The unary methods the client calls: the Lock service's, then the Election service's. */
type UnaryMethod = 'acquire' | 'extend' | 'release' | 'inspect' | 'acquireMany' | 'extendMany' | 'releaseMany' | ElectionMethod;
type ElectionMethod = 'leader' | 'proclaim' | 'resign' | 'participants';
const ELECTION_METHODS: ReadonlySet<string> = new Set<ElectionMethod>(['leader', 'proclaim', 'resign', 'participants']);

/** A connection to one redlockd (or a load balancer in front of several). */
export class Client {
  readonly #stub: InstanceType<typeof LockClient>;
  readonly #elections: InstanceType<typeof ElectionClient>;
  readonly #metadata: Metadata;
  readonly #calls: LeaseCalls;
  readonly #streams = new OpenStreams();

  /**
   * Unset options come from REDLOCKD_ADDR (default 127.0.0.1:7420),
   * REDLOCKD_TOKEN and REDLOCKD_CA / REDLOCKD_CERT / REDLOCKD_KEY, as
   * redlockctl reads them. Connects lazily, on the first call.
   */
  constructor(options: ClientOptions = {}) {
    const { address, credentials, metadata } = connection(options);
    const interceptors = traceContext(); // the caller's trace context, with OpenTelemetry
    this.#stub = new LockClient(address, credentials, { interceptors });
    this.#elections = new ElectionClient(address, credentials, { channelOverride: this.#stub.getChannel(), interceptors });
    this.#metadata = metadata;
    this.#calls = {
      extend: (request) => this.#unary('extend', request, 0),
      release: (request) => this.#unary('release', request, 0),
      extendMany: (request) => this.#unary('extendMany', request, 0),
      releaseMany: (request) => this.#unary('releaseMany', request, 0),
    };
  }

  /**
   * Closes the connection; pending calls fail. Every open stream ends: a
   * held lock or a leadership is lost (its `signal` aborts, and the daemon
   * lets go as the stream goes), a pending hold() or campaign() rejects,
   * and observe() and watch() iterations end.
   */
  close(): void {
    this.#streams.close();
    this.#stub.close();
  }

  #unary<Q, R>(method: UnaryMethod, request: Q, waitMs: number, signal?: AbortSignal): Promise<R> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const deadline = new Date(Date.now() + waitMs + CALL_SLACK_MS);
      const onAbort = () => {
        call.cancel();
        reject(signal?.reason);
      };
      const service = ELECTION_METHODS.has(method) ? this.#elections : this.#stub;
      const stub = service as unknown as Record<string, (...args: unknown[]) => { cancel(): void }>;
      const call = stub[method].call(service, request, this.#metadata, { deadline }, (error: ServiceError | null, reply: R) => {
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
    const { ttl = 10_000, wait = 0, owner = '', shared, permits, reentrancyKey, lockDelay, signal } = options;
    checkResource(resource);
    checkOwner(owner);
    const kind = checkKind(shared, permits, reentrancyKey);
    millis('ttl', ttl);
    const delay = lockDelay === undefined ? undefined : toDuration(millis('lock_delay', lockDelay));
    const deadline = performance.now() + millis('wait', wait);
    return untilDeadline(deadline, signal, async (waitLeft) => {
      const sentAt = performance.now();
      const reply = await this.#unary<unknown, AcquireResponse>(
        'acquire',
        { resource, owner, ...kind, ttl: toDuration(ttl), wait: waitLeft > 0 ? toDuration(waitLeft) : undefined, lockDelay: delay },
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
   * Extends leases of one set (what acquireMany() resolved to, or some of
   * them) in one call: resets their time to live to `ttl` ms (default: the
   * TTL the set was taken with) and moves each extended lease's validUntil
   * on. Resolves true when every one was extended; false when any had
   * expired, been taken over or been released: stop working under the set.
   */
  extendMany(leases: readonly Lease[], ttl?: number): Promise<boolean> {
    return Lease.extendMany(this.#calls, leases, ttl);
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
    const { ttl = 10_000, wait = 5_000, owner = '', maxHold, lockDelay, shared, permits, reentrancyKey, signal } = options;
    checkResource(resource);
    checkOwner(owner);
    const kind = checkKind(shared, permits, reentrancyKey);
    millis('ttl', ttl);
    if (maxHold !== undefined) millis('max_hold', maxHold);
    if (lockDelay !== undefined) millis('lock_delay', lockDelay);
    const deadline = performance.now() + millis('wait', wait);
    return untilDeadline(deadline, signal, (waitLeft) => {
      const call = this.#stub.hold(this.#metadata);
      const start = {
        resource,
        owner,
        ...kind,
        ttl: toDuration(ttl),
        wait: waitLeft > 0 ? toDuration(waitLeft) : undefined,
        maxHold: maxHold === undefined ? undefined : toDuration(maxHold),
        lockDelay: lockDelay === undefined ? undefined : toDuration(lockDelay),
      };
      return this.#streams.session(call, openSession(call, start, signal));
    });
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

  /**
   * Follows who holds `resource`: the state now first (`current`), then
   * each change as the daemon sees it. A view, not a lock.
   *
   *     for await (const change of client.watch('orders/42')) console.log(change.event, change.holder?.fencingToken);
   */
  watch(resource: string, options: FollowOptions = {}): AsyncGenerator<WatchChange, void, undefined> {
    checkResource(resource);
    return follow(() => this.#stub.watch({ resource }, this.#metadata), watchChange, options.signal, this.#streams.closing);
  }

  /**
   * Campaigns in `election` (docs/design.md#elections): waits in line
   * behind the other candidates, here and on other daemons, and resolves
   * once this one leads. `leadership.signal` aborts with a
   * LeadershipLostError the moment the leadership is lost, or when its last
   * validity runs out with no word from the daemon: stop leading then, and
   * send `leadership.term` with every write.
   *
   *     await using leadership = await client.campaign('jobs', { candidate: 'pod-a', value: 'pod-a:8080' });
   */
  async campaign(election: string, options: CampaignOptions = {}): Promise<Leadership> {
    const { candidate = hostname(), value = '', ttl = 10_000, maxHold, lockDelay, signal } = options;
    checkElection(election);
    checkCandidate(candidate);
    const bytes = electionValue(value);
    millis('ttl', ttl);
    if (maxHold !== undefined) millis('max_hold', maxHold);
    if (lockDelay !== undefined) millis('lock_delay', lockDelay);
    const start = {
      election,
      candidate,
      value: bytes,
      ttl: toDuration(ttl),
      maxHold: maxHold === undefined ? undefined : toDuration(maxHold),
      lockDelay: lockDelay === undefined ? undefined : toDuration(lockDelay),
    };
    const call = this.#elections.campaign(this.#metadata);
    return this.#streams.session(call, openCampaign(call, start, signal));
  }

  /** Who leads `election` now, as a majority of the masters agree. */
  async leader(election: string): Promise<LeaderState> {
    checkElection(election);
    return leaderState(await this.#unary<unknown, LeaderResponse>('leader', { election }, 0));
  }

  /**
   * Follows `election`: the state now first, then every change (a new
   * leader, a new value, no leader); terms never go back. A view, not a
   * lock. Throws UnavailableError when no majority can say the first state.
   *
   *     for await (const state of client.observe('jobs')) console.log(state.candidate, state.term);
   */
  observe(election: string, options: FollowOptions = {}): AsyncGenerator<LeaderState, void, undefined> {
    checkElection(election);
    return follow(() => this.#elections.observe({ election }, this.#metadata), leaderState, options.signal, this.#streams.closing);
  }

  /**
   * Publishes `value` for the leader of `term`, from anywhere. Rejects with
   * FailedPreconditionError, naming the current term, when `term` no longer
   * leads (nothing changes then).
   */
  async proclaim(election: string, term: bigint, value: string | Uint8Array): Promise<void> {
    checkElection(election);
    await this.#unary('proclaim', { election, term: checkTerm(term), value: electionValue(value) }, 0);
  }

  /**
   * Ends the leadership of `term`, from anywhere: its lock is released at
   * once. Rejects with FailedPreconditionError, naming the current term,
   * when `term` no longer leads.
   */
  async resign(election: string, term: bigint): Promise<void> {
    checkElection(election);
    await this.#unary('resign', { election, term: checkTerm(term) }, 0);
  }

  /** The candidates THIS daemon queues for `election`, first in line first (a leader is no longer queued). */
  async participants(election: string): Promise<string[]> {
    checkElection(election);
    return (await this.#unary<unknown, ParticipantsResponse>('participants', { election }, 0)).candidates;
  }
}
