// The conformance calls (clients/conformance/README.md#calls) through the
// public API of @redlockd/client. Each call resolves to the fields its
// expectations compare and the handle it binds. Durations are the client's
// milliseconds; tokens and terms its bigints.

import {
  type Client,
  FailedPreconditionError,
  HeldLock,
  InvalidArgumentError,
  type LeaderState,
  Leadership,
  Lease,
  LockLostError,
  NotAcquiredError,
  UnavailableError,
  type WatchChange,
} from '@redlockd/client';
import type { InspectResponse } from '@redlockd/client/proto';

export type Fields = { [key: string]: unknown };
type Args = { [key: string]: unknown };
type Result = [Fields, unknown];

/**
 * A campaign's wait is an AbortSignal in this client (there is no `wait`
 * option): a campaign given up on its timeout is the scenarios'
 * NOT_ELECTED.
 */
class NotElected extends Error {}

/** An observe or watch, read into a queue so that next() can wait with a limit. */
class Stream {
  readonly #states: unknown[] = [];
  readonly #waiting: Array<() => void> = [];
  readonly stop = new AbortController();
  #ended: unknown = undefined;

  constructor(
    view: AsyncGenerator<unknown, void, undefined>,
    readonly convert: (state: never) => Fields,
  ) {
    void (async () => {
      try {
        for await (const state of view) this.#push(state);
        this.#ended = new Error('the stream ended');
      } catch (error) {
        this.#ended = error;
      }
      this.#wake();
    })();
  }

  #push(state: unknown): void {
    this.#states.push(state);
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** The next state's fields; null when none came within `ms`. */
  async next(ms: number): Promise<Fields | null> {
    if (this.#states.length === 0 && this.#ended === undefined) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
    }
    if (this.#states.length > 0) return this.convert(this.#states.shift() as never);
    if (this.#ended !== undefined) throw this.#ended;
    return null;
  }
}

const opt = (args: Args, key: string): number | undefined => (args[key] === undefined ? undefined : Number(args[key]));

/** Only the options given: the client's defaults for the others. */
const given = <T extends object>(options: T): T =>
  Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;

const leaseFields = (lease: Lease | HeldLock): Fields => ({
  token: lease.fencingToken,
  shared: lease.shared,
  permits: lease.permits,
  slot: lease.slot,
  resource: lease.resource,
});

const holderFields = (view: Pick<InspectResponse, 'holder'>): Fields =>
  view.holder ? { token: view.holder.fencingToken, owner: view.holder.owner } : {};

const leaderFields = (state: LeaderState): Fields =>
  state.elected ? { elected: true, candidate: state.candidate, value: state.value.toString('utf8'), term: state.term } : { elected: false };

const watchFields = (change: WatchChange): Fields => ({
  kind: change.event.toUpperCase(),
  held: change.held,
  readers: change.readers,
  permits: change.permits,
  permits_out: change.permitsOut,
  ...holderFields(change),
});

/** The calls, through `client`. */
export class Calls {
  constructor(private readonly client: Client) {}

  code(error: Error): string {
    if (error instanceof InvalidArgumentError) return 'INVALID_ARGUMENT';
    if (error instanceof FailedPreconditionError) return 'FAILED_PRECONDITION';
    if (error instanceof UnavailableError) return 'UNAVAILABLE';
    if (error instanceof NotElected) return 'NOT_ELECTED';
    if (error instanceof NotAcquiredError) return 'NOT_ACQUIRED';
    return error?.name ?? String(error);
  }

  async call(verb: string, a: Args): Promise<Result> {
    const c = this.client;
    switch (verb) {
      case 'acquire': {
        const lease = await c.acquire(
          a.resource as string,
          given({
            ttl: opt(a, 'ttl_ms'),
            wait: opt(a, 'wait_ms'),
            owner: a.owner as string | undefined,
            shared: a.shared as boolean | undefined,
            permits: opt(a, 'permits'),
            reentrancyKey: a.reentrancy_key as string | undefined,
            lockDelay: opt(a, 'lock_delay_ms'),
          }),
        );
        return lease ? [{ acquired: true, ...leaseFields(lease) }, lease] : [{ acquired: false }, null];
      }
      case 'extend':
        return [{ extended: await (a.lease as Lease).extend(opt(a, 'ttl_ms')) }, null];
      case 'release':
        return [{ released: await (a.lease as Lease).release() }, null];
      case 'inspect': {
        const view = await c.inspect(a.resource as string);
        const { held, readers, permits, permitsOut } = view;
        return [{ held, readers, permits, permits_out: permitsOut, ...holderFields(view) }, null];
      }
      case 'acquire_many': {
        const leases = await c.acquireMany(
          a.resources as string[],
          given({ ttl: opt(a, 'ttl_ms'), wait: opt(a, 'wait_ms'), owner: a.owner as string | undefined }),
        );
        if (!leases) return [{ acquired: false }, null];
        const fields: Fields = {
          acquired: true,
          count: leases.length,
          resources: leases.map((l) => l.resource),
          tokens: leases.map((l) => l.fencingToken),
        };
        leases.forEach((lease, i) => (fields[String(i)] = leaseFields(lease)));
        return [fields, leases];
      }
      case 'extend_many':
        return [{ extended: await c.extendMany(a.set as Lease[], opt(a, 'ttl_ms')) }, null];
      case 'release_many':
        return [{ released: await c.releaseMany(a.set as Lease[]) }, null];
      case 'hold': {
        const lock = await c.hold(
          a.resource as string,
          given({
            ttl: opt(a, 'ttl_ms'),
            wait: opt(a, 'wait_ms') ?? 0,
            owner: a.owner as string | undefined,
            shared: a.shared as boolean | undefined,
            permits: opt(a, 'permits'),
            reentrancyKey: a.reentrancy_key as string | undefined,
            maxHold: opt(a, 'max_hold_ms'),
            lockDelay: opt(a, 'lock_delay_ms'),
          }),
        );
        return [{ held: true, ...leaseFields(lock) }, lock];
      }
      case 'release_hold':
        return [{ released: await (a.hold as HeldLock).release() }, null];
      case 'campaign':
        return this.campaign(a);
      case 'leader':
        return [leaderFields(await c.leader(a.election as string)), null];
      case 'proclaim':
        if (a.leadership) await (a.leadership as Leadership).proclaim(a.value as string);
        else await c.proclaim(a.election as string, BigInt(a.term as string | bigint), a.value as string);
        return [{}, null];
      case 'resign':
        if (a.leadership) await (a.leadership as Leadership).resign();
        else await c.resign(a.election as string, BigInt(a.term as string | bigint));
        return [{}, null];
      case 'observe':
        return this.follow((signal) => c.observe(a.election as string, { signal }), leaderFields);
      case 'watch':
        return this.follow((signal) => c.watch(a.resource as string, { signal }), watchFields);
      case 'close':
        (a.stream as Stream).stop.abort();
        return [{}, null];
      default:
        throw new Error(`no such call ${verb}`);
    }
  }

  private async campaign(a: Args): Promise<Result> {
    const wait = opt(a, 'wait_ms');
    const options = given({
      candidate: a.candidate as string,
      value: a.value as string | undefined,
      ttl: opt(a, 'ttl_ms'),
      signal: wait === undefined ? undefined : AbortSignal.timeout(wait),
    });
    let leadership: Leadership;
    try {
      leadership = await this.client.campaign(a.election as string, options);
    } catch (error) {
      if (wait !== undefined && (error as Error)?.name === 'TimeoutError') throw new NotElected(`not elected within ${wait} ms`);
      throw error;
    }
    return [{ elected: true, term: leadership.term, value: leadership.value.toString('utf8') }, leadership];
  }

  private async follow<T>(open: (signal: AbortSignal) => AsyncGenerator<T, void, undefined>, convert: (state: T) => Fields): Promise<Result> {
    const stop = new AbortController();
    const stream = new Stream(open(stop.signal), convert as (state: never) => Fields);
    stream.stop.signal.addEventListener('abort', () => stop.abort(), { once: true });
    const first = await stream.next(10_000);
    if (first === null) {
      stream.stop.abort();
      throw new Error('no first state within 10 s');
    }
    return [first, stream];
  }

  next(stream: unknown, ms: number): Promise<Fields | null> {
    return (stream as Stream).next(ms);
  }

  /** Whether the session or leadership was told lost within `ms`. */
  async lost(handle: unknown, ms: number): Promise<boolean> {
    const { signal } = handle as HeldLock | Leadership;
    if (signal.aborted) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve(true)), { once: true });
    });
  }

  /** Ends what a scenario left open, whatever its outcome. */
  async cleanUp(handles: unknown[]): Promise<void> {
    for (const thing of handles.flatMap((h) => (Array.isArray(h) ? h : [h]))) {
      try {
        if (thing instanceof Stream) thing.stop.abort();
        else if (thing instanceof HeldLock) await thing.release();
        else if (thing instanceof Leadership) await thing.resign();
        else if (thing instanceof Lease) await thing.release();
      } catch (error) {
        if (!(error instanceof LockLostError) && !(error instanceof UnavailableError)) throw error;
      }
    }
  }
}
