// Client.close() ends every open stream: a held lock and a leadership are
// lost (their signal aborts) and the daemon lets go at once; a hold() still
// waiting rejects; observe() and watch() iterations end.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client, LeadershipLostError, LockLostError } from '@redlockd/client';
import { election, resource, within } from './helpers';

const other = new Client();

/** Resolves once `signal` aborts, with its reason. */
const aborted = (signal: AbortSignal): Promise<unknown> =>
  signal.aborted ? Promise.resolve(signal.reason) : new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));

describe('close()', () => {
  after(() => other.close());

  test('ends held locks, leaderships, waiting holds, observe and watch', async () => {
    const client = new Client();
    const [name, waited, race] = [resource(), resource(), election()];
    const lock = await client.hold(name, { ttl: 30_000 });
    const leadership = await client.campaign(race, { candidate: 'pod-a', ttl: 30_000 });
    const blocker = await other.hold(waited, { ttl: 30_000 });
    const waiting = client.hold(waited, { ttl: 30_000, wait: 30_000 });
    waiting.catch(() => {});
    const watch = client.watch(name);
    const observe = client.observe(race);
    assert.equal((await within(watch.next(), 5_000, 'watch: the state now')).done, false);
    assert.equal((await within(observe.next(), 5_000, 'observe: the state now')).done, false);
    const watching = watch.next();
    const observing = observe.next();

    client.close();

    const lost = await within(aborted(lock.signal), 2_000, "the held lock's signal");
    assert.ok(lost instanceof LockLostError && /the client was closed/.test(lost.message), String(lost));
    assert.equal(lock.lost, true);
    const resigned = await within(aborted(leadership.signal), 2_000, "the leadership's signal");
    assert.ok(resigned instanceof LeadershipLostError, String(resigned));
    await within(assert.rejects(waiting), 2_000, 'the waiting hold');
    assert.deepEqual(await within(watching, 2_000, 'the watch iteration'), { done: true, value: undefined });
    assert.deepEqual(await within(observing, 2_000, 'the observe iteration'), { done: true, value: undefined });
    // The streams are gone: the daemon let go of the lock and the election at once.
    const next = await other.acquire(name, { ttl: 1_000, wait: 3_000 });
    assert.ok(next, 'the lock of a closed client stayed held');
    await next.release();
    const successor = await other.campaign(race, { candidate: 'pod-b', signal: AbortSignal.timeout(3_000) });
    await successor.resign();
    await blocker.release();
  });
});
