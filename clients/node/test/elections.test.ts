// Elections: campaign, leader, participants, proclaim and resign (on the
// leadership and by term), terms above 2^53, lock delay, bad input. It
// raises every fence counter, so test.sh runs it on a daemon of its own.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { after, describe, test } from 'node:test';
import {
  Client,
  FailedPreconditionError,
  InvalidArgumentError,
  LeadershipLostError,
  Leadership,
  LockLostError,
  RedlockdError,
} from '@redlockd/client';
import { BUCKETS, election, highestFence, masterPorts, resource, setEveryFence, sleep, within } from './helpers';

const client = new Client();

/** Polls participants(name) until `wanted` holds, for up to 5 s; the last answer. */
async function participantsUntil(name: string, wanted: (candidates: string[]) => boolean): Promise<string[]> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    const candidates = await client.participants(name);
    if (wanted(candidates) || performance.now() > deadline) return candidates;
    await sleep(20);
  }
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise.then(() => undefined, () => undefined), sleep(ms).then(() => marker)])) === marker;
}

describe('elections', () => {
  after(() => client.close());

  test('the first candidate leads with the term leader() reads; the next one queues, then leads with a larger term', async () => {
    const name = election();
    const first = await client.campaign(name, { candidate: 'pod-a', value: 'pod-a:8080', ttl: 5_000 });
    assert.ok(first instanceof Leadership);
    assert.ok(first.term > 0n && typeof first.term === 'bigint');
    assert.equal(first.value.toString(), 'pod-a:8080');
    assert.equal(first.signal.aborted, false);
    assert.ok(first.remaining > 3_000 && first.remaining <= 5_000, String(first.remaining));
    const now = await client.leader(name);
    assert.deepEqual(
      { elected: now.elected, candidate: now.candidate, term: now.term, value: now.value.toString() },
      { elected: true, candidate: 'pod-a', term: first.term, value: 'pod-a:8080' },
    );
    assert.ok(now.since instanceof Date && Math.abs(now.since.getTime() - Date.now()) < 60_000, String(now.since));

    const second = client.campaign(name, { candidate: 'pod-b', ttl: 5_000 });
    assert.deepEqual(await participantsUntil(name, (c) => c.length > 0), ['pod-b']);
    assert.ok(await pendingAfter(second, 300), 'a second candidate was elected beside the first');
    assert.equal(await first.resign(), true);
    assert.equal(first.lost, false, 'a resignation counted as a loss');
    await using next = await within(second, 5_000, 'the next candidate elected');
    assert.ok(next.term > first.term, `${next.term} after ${first.term}`);
    assert.equal((await client.leader(name)).term, next.term);
    assert.deepEqual(await client.participants(name), []);
  });

  test('proclaim on the leadership and by term; a stale term is refused naming the current one; resign by term', async () => {
    const name = election();
    const leadership = await client.campaign(name, { candidate: 'pod-a', value: 'one' });
    await leadership.proclaim('two');
    assert.equal(leadership.value.toString(), 'two');
    assert.equal((await client.leader(name)).value.toString(), 'two');
    const bytes = Buffer.from([0, 255, 10, 128]);
    await client.proclaim(name, leadership.term, bytes);
    assert.deepEqual((await client.leader(name)).value, bytes);
    const current = new RegExp(`\\b${leadership.term}\\b`);
    // One call at a time: a second call's refusal arriving while the first is
    // awaited would otherwise be an unhandled rejection.
    for (const stale of [() => client.proclaim(name, leadership.term - 1n, 'x'), () => client.resign(name, leadership.term + 1n)]) {
      await assert.rejects(stale, (e: Error) => e instanceof FailedPreconditionError && current.test(e.message));
    }
    assert.deepEqual((await client.leader(name)).value, bytes, 'a refused proclaim changed the value');

    await client.resign(name, leadership.term);
    // Resigned from outside the stream: for the leader that is a loss.
    await within(new Promise((resolve) => leadership.signal.addEventListener('abort', resolve)), 2_000, 'the leader told');
    assert.ok(leadership.signal.reason instanceof LeadershipLostError);
    assert.ok(leadership.signal.reason instanceof LockLostError);
    assert.match(leadership.signal.reason.message, /resigned by the daemon/);
    assert.equal((await client.leader(name)).elected, false);
    await assert.rejects(leadership.proclaim('three'), LeadershipLostError);
    assert.equal(await leadership.resign(), false);
    await assert.rejects(leadership[Symbol.asyncDispose](), LeadershipLostError);
  });

  test('terms above 2^53 stay exact: from ELECTED, through leader(), back in proclaim and resign', async () => {
    const ports = masterPorts();
    const highest = [2n ** 50n, ...ports.map(highestFence)].reduce((a, b) => (a > b ? a : b));
    const counter = highest + 1_000_003n;
    for (const port of ports) assert.equal(await setEveryFence(port, counter), BUCKETS, `the buckets verified on ${port}`);
    const name = election();
    const leadership = await client.campaign(name, { candidate: 'pod-a' });
    assert.equal(leadership.term / 16n, counter + 1n);
    assert.ok(leadership.term > 2n ** 53n);
    assert.equal((await client.leader(name)).term, leadership.term);
    assert.equal(JSON.parse(JSON.stringify(leadership)).term, leadership.term.toString());
    await assert.rejects(client.proclaim(name, leadership.term + 1n, 'x'), FailedPreconditionError);
    await client.proclaim(name, leadership.term, 'exact');
    await client.resign(name, leadership.term);
    assert.equal((await client.leader(name)).elected, false);
  });

  test('lock delay: a leader or holder that vanishes keeps the lock that long; a resignation or release frees it at once', async () => {
    const name = election();
    const lock = resource();
    // A process that dies as leader and holder: its streams break, no resignation, no release.
    const script = `
      const { Client } = require('@redlockd/client');
      const client = new Client();
      Promise.all([
        client.campaign(${JSON.stringify(name)}, { candidate: 'pod-gone', ttl: 5000, lockDelay: 1500 }),
        client.hold(${JSON.stringify(lock)}, { ttl: 5000, lockDelay: 1500 }),
      ]).then(() => console.log('ready'));`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], cwd: __dirname });
    try {
      await within(
        new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d) => (String(d).includes('ready') ? resolve() : undefined));
          child.on('exit', () => reject(new Error('the child exited')));
        }),
        10_000,
        'the child elected and holding',
      );
    } finally {
      child.kill('SIGKILL');
    }
    let started = performance.now();
    await using next = await within(client.campaign(name, { candidate: 'pod-next' }), 10_000, 'the next leader');
    assert.ok(performance.now() - started >= 1_300, `elected ${performance.now() - started} ms after the leader vanished`);
    const lease = await client.acquire(lock, { wait: 5_000 });
    assert.ok(lease && performance.now() - started >= 1_300);
    await lease.release();

    assert.equal(await next.resign(), true);
    const delayed = await client.campaign(name, { candidate: 'pod-c', lockDelay: 3_000 });
    assert.equal(await delayed.resign(), true);
    const held = await client.hold(lock, { lockDelay: 3_000 });
    assert.equal(await held.release(), true);
    started = performance.now();
    await using last = await client.campaign(name, { candidate: 'pod-d' });
    const again = await client.acquire(lock, { wait: 2_000 });
    assert.ok(again, 'a released lock was kept for its lock delay');
    await again.release();
    assert.ok(performance.now() - started < 1_000, `a resigned election was free only after ${performance.now() - started} ms`);
    assert.ok(last.term > delayed.term);
  });

  test('an aborted signal withdraws a waiting candidacy, and resigns a leadership', async () => {
    const name = election();
    const first = await client.campaign(name, { candidate: 'pod-a' });
    const waiting = new AbortController();
    const second = client.campaign(name, { candidate: 'pod-b', signal: waiting.signal });
    assert.deepEqual(await participantsUntil(name, (c) => c.length > 0), ['pod-b']);
    waiting.abort(new Error('no longer a candidate'));
    await assert.rejects(second, /no longer a candidate/);
    assert.deepEqual(await participantsUntil(name, (c) => c.length === 0), []);
    assert.equal(await first.resign(), true);

    const mine = new AbortController();
    const leadership = await client.campaign(name, { candidate: 'pod-c', signal: mine.signal });
    mine.abort(new Error('shutting down'));
    assert.equal(leadership.signal.aborted, true, 'the work as leader was not told to stop');
    assert.match(String(leadership.signal.reason), /shutting down/);
    assert.equal(await leadership.resign(), false, 'a leadership given up midway was reported as held to the end');
    assert.equal((await client.leader(name)).elected, false, 'the abort did not resign');
  });

  test('a resignation under way refuses a proclaim, and resign() and release() answer their first answer again', async () => {
    const name = election();
    const leadership = await client.campaign(name, { candidate: 'pod-a' });
    const resigning = leadership.resign();
    await assert.rejects(leadership.proclaim('late'), (e: Error) => e instanceof RedlockdError && /has ended/.test(e.message));
    assert.equal(await resigning, true);
    assert.equal(await leadership.resign(), true, 'a second resign() gave another answer');
    await leadership[Symbol.asyncDispose]();
    assert.equal(leadership.lost, false);
    const lock = await client.hold(resource(), { ttl: 5_000 });
    assert.equal(await lock.release(), true);
    assert.equal(await lock.release(), true, 'a second release() gave another answer');
    await lock[Symbol.asyncDispose]();
    assert.equal(lock.lost, false);
  });

  test('bad input fails before anything is sent, naming the field; ranges only the daemon knows come back from it', async () => {
    const name = election();
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [() => client.campaign(''), /^invalid election: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8$/],
      [() => client.campaign(name, { candidate: '' }), /^invalid candidate: is 0 bytes long/],
      [() => client.campaign(name, { candidate: 'x'.repeat(257) }), /^invalid candidate: is 257 bytes long/],
      [() => client.campaign(name, { value: 'x'.repeat(4097) }), /^invalid value: is 4097 bytes long; at most 4096 are allowed$/],
      [() => client.campaign(name, { lockDelay: -1 }), /^invalid lock_delay: -1ms is not a valid non-negative duration/],
      [() => client.hold(resource(), { lockDelay: Number.NaN }), /^invalid lock_delay: NaNms/],
      [() => client.leader('a\nb'), /^invalid election: contains the control character '\\n'/],
      [() => client.proclaim(name, 0n, 'x'), /^invalid term: must be set: the term ELECTED or Leader gave$/],
      [() => client.resign(name, 7 as unknown as bigint), /^invalid term: must be a bigint \(exact above 2\^53\), not number$/],
      [() => client.resign(name, 2n ** 64n), /^invalid term: 18446744073709551616 is outside 1 to 2\^64 - 1$/],
      // From the daemon:
      [() => client.campaign(name, { lockDelay: 61_000 }), /^invalid lock_delay: 1m 1s is outside the allowed range \[0s, 1m\]$/],
      [() => client.hold(resource(), { lockDelay: 61_000 }), /^invalid lock_delay: 1m 1s is outside the allowed range/],
      [() => client.campaign(name, { ttl: 300 }), /^invalid ttl: a campaign needs a TTL of at least/],
    ];
    for (const [call, message] of cases) {
      await assert.rejects(call, (e: Error) => {
        assert.ok(e instanceof InvalidArgumentError, String(e));
        assert.match(e.message, message);
        return true;
      });
    }
    assert.throws(() => client.observe(''), InvalidArgumentError);
    assert.throws(() => client.watch('x'.repeat(257)), /^InvalidArgumentError: invalid resource: is 257 bytes long/);
    const leadership = await client.campaign(name);
    await assert.rejects(leadership.proclaim(Buffer.alloc(4097)), /^InvalidArgumentError: invalid value: is 4097 bytes/);
    assert.equal(leadership.lost, false, 'a proclaim refused before sending ended the leadership');
    assert.equal(await leadership.resign(), true);
  });
});
