// observe() and watch(): async iterators over the daemon's streams, the
// state first and then each change; leaving the loop or aborting ends them.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client, type LeaderState, type WatchChange } from '@redlockd/client';
import { election, resource, within } from './helpers';

const client = new Client();

/** The next value of `iterator`, within `ms`. */
async function next<T>(iterator: AsyncIterator<T>, what: string, ms = 5_000): Promise<T> {
  const step = await within(iterator.next(), ms, what);
  assert.equal(step.done, false, `${what}: the stream ended`);
  return step.value as T;
}

describe('observe and watch', () => {
  after(() => client.close());

  test('observe: no leader, then each leader and value as they come, then no leader; terms never go back', async () => {
    const name = election();
    const states = client.observe(name);
    const seen: LeaderState[] = [];
    const first = await next(states, 'the state now');
    assert.equal(first.elected, false);
    const a = await client.campaign(name, { candidate: 'pod-a', value: 'one' });
    seen.push(await next(states, 'the first leader'));
    assert.deepEqual([seen[0].elected, seen[0].candidate, seen[0].term, seen[0].value.toString()], [true, 'pod-a', a.term, 'one']);
    await a.proclaim('two');
    seen.push(await next(states, 'the proclaimed value'));
    assert.deepEqual([seen[1].candidate, seen[1].term, seen[1].value.toString()], ['pod-a', a.term, 'two']);
    const waiting = client.campaign(name, { candidate: 'pod-b', value: 'three' });
    await a.resign();
    const b = await within(waiting, 5_000, 'the second leader');
    // Between the two leaders the observer may or may not have seen no leader.
    let state = await next(states, 'the change after the resignation');
    if (!state.elected) state = await next(states, 'the second leader');
    assert.deepEqual([state.candidate, state.term, state.value.toString()], ['pod-b', b.term, 'three']);
    assert.ok(state.term > a.term);
    await b.resign();
    assert.equal((await next(states, 'no leader')).elected, false);
    // Leaving the loop cancels the stream; the iterator is done.
    assert.deepEqual(await states.return(undefined), { done: true, value: undefined });
    assert.deepEqual(await states.next(), { done: true, value: undefined });
  });

  test('observe in a for await loop, ended by an aborted signal: the loop throws its reason', async () => {
    const name = election();
    const controller = new AbortController();
    const terms: bigint[] = [];
    const loop = (async () => {
      for await (const state of client.observe(name, { signal: controller.signal })) {
        if (state.elected) terms.push(state.term);
        if (terms.length === 2) controller.abort(new Error('seen enough'));
      }
    })();
    const ended = loop.then(
      () => new Error('the loop ended without the reason'),
      (error: unknown) => error,
    );
    for (let i = 0; i < 2; i++) {
      const leadership = await client.campaign(name, { candidate: `pod-${i}` });
      // Until the observer saw this term: only then the next leader.
      for (let waited = 0; !terms.includes(leadership.term) && waited < 5_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await leadership.resign();
    }
    assert.match(String(await within(ended, 5_000, 'the loop')), /seen enough/);
    assert.equal(terms.length, 2);
    assert.ok(terms[0] < terms[1], `terms went back: ${terms}`);
  });

  test('watch: current, then acquired with the holder, released; expired; changed for readers', async () => {
    const name = resource();
    const changes = client.watch(name);
    try {
      await watchSteps(changes, name);
    } finally {
      await changes.return(undefined); // cancels the stream
    }
  });
});

/** The watch test, on `changes`: the watch of `name`. */
async function watchSteps(changes: AsyncGenerator<WatchChange, void, undefined>, name: string): Promise<void> {
  const current = await next(changes, 'the current state');
  assert.deepEqual([current.event, current.held, current.holder], ['current', false, undefined]);

  const lease = await client.acquire(name, { ttl: 5_000, owner: 'watched-owner' });
  assert.ok(lease);
  const acquired = await next(changes, 'acquired');
  assert.deepEqual([acquired.event, acquired.held, acquired.holder?.owner], ['acquired', true, 'watched-owner']);
  // The holder's token as Inspect rebuilds it from the masters' counters: the lease's or above.
  const holderToken = acquired.holder?.fencingToken ?? 0n;
  assert.ok(holderToken >= lease.fencingToken, `${holderToken} below ${lease.fencingToken}`);
  assert.equal(await lease.release(), true);
  const released = await next(changes, 'released');
  assert.deepEqual([released.event, released.held, released.holder?.fencingToken], ['released', false, holderToken]);

  const short = await client.acquire(name, { ttl: 500 });
  assert.ok(short);
  assert.equal((await next(changes, 'acquired again')).event, 'acquired');
  // Never released: its TTL runs out, seen by the daemon's next read.
  const expired = await next(changes, 'expired', 5_000);
  assert.equal(expired.event, 'expired');
  assert.ok((expired.holder?.fencingToken ?? 0n) >= short.fencingToken);

  const reader = await client.acquire(name, { ttl: 5_000, shared: true });
  assert.ok(reader);
  const shared = await next(changes, 'a reader');
  assert.ok(['acquired', 'changed'].includes(shared.event), shared.event);
  assert.equal(shared.readers, 1);
  const second = await client.acquire(name, { ttl: 5_000, shared: true });
  assert.ok(second);
  const more = await next(changes, 'a second reader');
  assert.deepEqual([more.event, more.readers], ['changed', 2]);
  await Promise.all([reader.release(), second.release()]);
}
