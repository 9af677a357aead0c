// acquire / extend / release against a real daemon and five real masters.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import { credentials, Metadata, status } from '@grpc/grpc-js';
import { Client, FailedPreconditionError, InvalidArgumentError, Lease, LockLostError, NotAcquiredError, RedlockdError } from '@redlockd/client';
import { LockClient, LockMode } from '@redlockd/client/proto';
import { BUCKETS, highestFence, masterPorts, resource, setEveryFence, sleep } from './helpers';

const client = new Client();

describe('acquire, extend and release', () => {
  test('a second holder is refused, and the next holder gets a larger token', async () => {
    const name = resource();
    const first = await client.acquire(name, { ttl: 10_000 });
    assert.ok(first instanceof Lease);
    assert.equal(typeof first.fencingToken, 'bigint');
    assert.ok(first.validUntil > performance.now() && first.validUntil <= performance.now() + 10_000);
    assert.equal(await client.acquire(name, { ttl: 10_000 }), null, 'two holders at once');
    assert.equal(await client.acquire(name, { ttl: 10_000, wait: 300 }), null, 'two holders after a wait');
    const before = first.validUntil;
    await sleep(20);
    assert.equal(await first.extend(20_000), true);
    assert.ok(first.validUntil > before + 5_000, 'extend did not move validUntil on');
    assert.equal(await first.release(), true);
    const second = await client.acquire(name, { ttl: 10_000 });
    assert.ok(second && second.fencingToken > first.fencingToken);
    await second.release();
  });

  test('acquire with a wait gets the lock once the holder releases', async () => {
    const name = resource();
    const first = await client.acquire(name, { ttl: 10_000 });
    assert.ok(first);
    const waiting = client.acquire(name, { ttl: 10_000, wait: 10_000 });
    await sleep(300);
    await first.release();
    const second = await waiting;
    assert.ok(second && second.fencingToken > first.fencingToken);
    await second.release();
  });

  test('a lease never shows its value: not in JSON, not in inspect', async () => {
    const lease = await client.acquire(resource(), { ttl: 10_000 });
    assert.ok(lease);
    const shown = JSON.stringify(lease) + inspect(lease, { showHidden: true }) + String(Object.keys(lease));
    assert.doesNotMatch(shown, /[0-9a-f]{40}/, 'the lock value was shown');
    assert.match(shown, new RegExp(`${lease.fencingToken}`));
    await lease.release();
  });

  test('a release after the lock expired is reported: false, and LockLostError from await using', async () => {
    const lease = await client.acquire(resource(), { ttl: 300 });
    assert.ok(lease);
    await sleep(600);
    assert.equal(await lease.extend(), false);
    assert.equal(await lease.release(), false);
    await lease[Symbol.asyncDispose](); // release() answered for itself
    const disposed = await client.acquire(resource(), { ttl: 300 });
    assert.ok(disposed);
    await sleep(600);
    await assert.rejects(disposed[Symbol.asyncDispose](), LockLostError);
    assert.equal(await disposed.release(), false, 'released again after await using');
  });

  test('tokens above 2^53 stay exact: bigints, never numbers', async () => {
    const ports = masterPorts();
    assert.equal(ports.length, 5);
    // Above every counter handed out, below 2^53 (where the masters' Lua stops).
    // Every bucket's counter, so the resource's bucket is among them; at
    // least 2^50, so that tokens pass 2^53 even before any lock took a counter.
    const highest = [2n ** 50n, ...ports.map(highestFence)].reduce((a, b) => (a > b ? a : b));
    const counter = highest + 1_000_003n;
    for (const port of ports) assert.equal(await setEveryFence(port, counter), BUCKETS, `the buckets verified on ${port}`);
    const lease = await client.acquire(resource(), { ttl: 10_000 });
    assert.ok(lease);
    // (the counter + 1) * 16 + the index of the first master that answered.
    assert.equal(lease.fencingToken / 16n, counter + 1n);
    assert.ok(lease.fencingToken % 16n < 5n);
    assert.ok(lease.fencingToken > 2n ** 53n);
    assert.equal(JSON.parse(JSON.stringify(lease)).fencingToken, lease.fencingToken.toString());
    await lease.release();
  });

  test('an aborted signal gives up an acquire that waits', async () => {
    const name = resource();
    const holder = await client.acquire(name, { ttl: 10_000 });
    assert.ok(holder);
    const started = performance.now();
    await assert.rejects(
      client.acquire(name, { ttl: 10_000, wait: 20_000, signal: AbortSignal.timeout(300) }),
      (e: Error) => e.name === 'TimeoutError',
    );
    assert.ok(performance.now() - started < 5_000, 'the wait went on after the abort');
    await holder.release();
  });
});

describe('shared locks', () => {
  test('two shared leases hold together, a writer is refused beside them and gets a larger token after them', async () => {
    const name = resource();
    const readers = await Promise.all([1, 2].map(() => client.acquire(name, { ttl: 10_000, shared: true })));
    const [first, second] = readers;
    assert.ok(first && second, 'a second shared acquire was refused');
    assert.equal(first.shared && second.shared, true);
    assert.match(inspect(first), /shared: true/);
    const view = await client.inspect(name);
    assert.equal(view.held, true);
    assert.equal(view.readers, 2);
    assert.equal(await client.acquire(name, { ttl: 10_000 }), null, 'an exclusive lock was granted beside two readers');
    assert.equal(await first.release(), true);
    assert.equal(await second.release(), true);
    const writer = await client.acquire(name, { ttl: 10_000 });
    assert.ok(writer, 'the writer was refused after the readers left');
    assert.equal(writer.shared, false);
    assert.ok(writer.fencingToken > first.fencingToken && writer.fencingToken > second.fencingToken,
      `writer ${writer.fencingToken}, readers ${first.fencingToken} and ${second.fencingToken}`);
    await writer.release();
  });

  test('shared Hold sessions (hold and using) hold together and keep a writer out', async () => {
    const name = resource();
    const tokens: bigint[] = [];
    {
      await using reader = await client.hold(name, { ttl: 5_000, shared: true });
      assert.equal(reader.shared, true);
      tokens.push(reader.fencingToken);
      await client.using(name, { ttl: 5_000, wait: 0, shared: true }, async (_signal, other) => {
        assert.equal(other.shared, true);
        tokens.push(other.fencingToken);
        assert.equal(await client.acquire(name, { ttl: 10_000 }), null, 'an exclusive lock was granted beside two readers');
      });
    }
    const writer = await client.acquire(name, { ttl: 10_000 });
    assert.ok(writer && tokens.every((t) => writer.fencingToken > t));
    await writer.release();
  });
});

describe('semaphores: { permits: N }', () => {
  test('two permits of two take different slots, a third is refused until one is released, another N fails', async () => {
    const name = resource();
    const first = await client.acquire(name, { ttl: 10_000, permits: 2 });
    const second = await client.acquire(name, { ttl: 10_000, permits: 2 });
    assert.ok(first && second, 'the second of two permits was refused');
    assert.deepEqual([first.permits, second.permits], [2, 2]);
    assert.deepEqual([first.slot, second.slot].sort(), [0, 1], 'two permits on one slot');
    assert.match(inspect(first), new RegExp(`permits: 2, slot: ${first.slot}`));
    assert.equal(JSON.parse(JSON.stringify(second)).slot, second.slot);
    const view = await client.inspect(name);
    assert.deepEqual([view.permits, view.permitsOut], [2, 2]);
    assert.equal(await client.acquire(name, { ttl: 10_000, permits: 2 }), null, 'a third permit of two was granted');
    await assert.rejects(
      client.acquire(name, { ttl: 10_000, permits: 3 }),
      (e: Error) => e instanceof FailedPreconditionError && e instanceof RedlockdError && e.code === status.FAILED_PRECONDITION && /2 permits/.test(e.message),
    );
    assert.equal(await first.release(), true);
    const third = await client.acquire(name, { ttl: 10_000, permits: 2 });
    assert.ok(third, 'the released permit was not handed out');
    assert.equal(third.slot, first.slot);
    assert.ok(third.fencingToken > first.fencingToken, 'tokens of one slot did not increase');
    assert.equal(await second.release(), true);
    assert.equal(await third.release(), true);
  });

  test('permit sessions (hold and using) take two slots and a third is not acquired', async () => {
    const name = resource();
    await using first = await client.hold(name, { ttl: 5_000, permits: 2 });
    await client.using(name, { ttl: 5_000, wait: 0, permits: 2 }, async (_signal, second) => {
      assert.deepEqual([first.slot, second.slot].sort(), [0, 1]);
      assert.equal(second.permits, 2);
      assert.match(inspect(second), /permits: 2, slot: [01]/);
      await assert.rejects(client.hold(name, { ttl: 5_000, wait: 0, permits: 2 }), NotAcquiredError);
      await assert.rejects(client.hold(name, { ttl: 5_000, wait: 0, permits: 3 }), FailedPreconditionError);
    });
  });
});

describe('reentrancy: { reentrancyKey }', () => {
  test('two acquires with one key share the lock and its token until the second release', async () => {
    const name = resource();
    const reentrancyKey = `job-${name}`;
    const outer = await client.acquire(name, { ttl: 10_000, reentrancyKey });
    const inner = await client.acquire(name, { ttl: 10_000, reentrancyKey });
    assert.ok(outer && inner, 'the same key was refused the lock it holds');
    assert.equal(inner.fencingToken, outer.fencingToken);
    assert.doesNotMatch(JSON.stringify(inner) + inspect(inner), new RegExp(reentrancyKey));
    assert.equal(await client.acquire(name, { ttl: 10_000 }), null, 'granted without the key while held twice');
    assert.equal(await client.acquire(name, { ttl: 10_000, reentrancyKey: 'another job' }), null, 'granted to another key');
    assert.equal(await inner.release(), true);
    assert.equal((await client.inspect(name)).held, true, 'released at the first of two releases');
    assert.equal(await client.acquire(name, { ttl: 10_000 }), null, 'granted without the key while held once');
    assert.equal(await outer.release(), true);
    const after = await client.acquire(name, { ttl: 10_000 });
    assert.ok(after, 'still held after both releases');
    assert.ok(after.fencingToken > outer.fencingToken);
    await after.release();
  });

  test('a Hold session with a key is one hold: an acquire with the key shares it, its release leaves the session holding', async () => {
    const name = resource();
    {
      await using session = await client.hold(name, { ttl: 5_000, reentrancyKey: 'session-key' });
      const lease = await client.acquire(name, { ttl: 10_000, reentrancyKey: 'session-key' });
      assert.ok(lease && lease.fencingToken === session.fencingToken);
      assert.equal(await lease.release(), true);
      assert.equal(await client.acquire(name, { ttl: 10_000 }), null, "the session's hold went with another's release");
    }
    const after = await client.acquire(name, { ttl: 10_000 });
    assert.ok(after);
    await after.release();
  });
});

describe('bad arguments', () => {
  // The last suite's hook: an open channel would keep the process alive.
  after(() => client.close());

  test('fail before anything is sent, naming the field and the range', async () => {
    const nowhere = new Client({ address: '127.0.0.1:1' });
    const cases: Array<[Promise<unknown>, RegExp]> = [
      [nowhere.acquire(''), /^invalid resource: is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8$/],
      [nowhere.acquire('x'.repeat(257)), /^invalid resource: is 257 bytes long/],
      [nowhere.acquire('r', { owner: 'o'.repeat(257) }), /^invalid owner: is 257 bytes long; it must be 0 to 256/],
      [nowhere.acquire('r', { ttl: -1 }), /^invalid ttl: -1ms is not a valid non-negative duration/],
      [nowhere.acquire('r', { wait: Number.NaN }), /^invalid wait: NaNms/],
      [nowhere.hold('r', { maxHold: -5 }), /^invalid max_hold: /],
      [nowhere.hold('tab\there'), /^invalid resource: contains the control character '\\t'/],
      [nowhere.acquire('r', { shared: 'yes' as unknown as boolean }), /^invalid shared: must be a boolean, not string$/],
      [nowhere.hold('r', { shared: 1 as unknown as boolean }), /^invalid shared: must be a boolean, not number$/],
      [nowhere.acquire('r', { permits: -1 }), /^invalid permits: -1 is not a number of permits/],
      [nowhere.hold('r', { permits: 1.5 }), /^invalid permits: 1.5 is not a number of permits/],
      [nowhere.acquire('r', { permits: 2 ** 32 }), /^invalid permits: 4294967296 /],
      [nowhere.acquire('r', { permits: '2' as unknown as number }), /^invalid permits: a string /],
      [nowhere.hold('r', { permits: 2, shared: true }), /^invalid permits: a shared lock takes no permits/],
      [nowhere.acquire('r', { reentrancyKey: 'é'.repeat(64) + 'k' }), /^invalid reentrancy_key: is 129 bytes; at most 128 are allowed$/],
      [nowhere.hold('r', { reentrancyKey: 7 as unknown as string }), /^invalid reentrancy_key: must be a string, not number$/],
      [nowhere.acquire('r', { reentrancyKey: 'half \ud800' }), /^invalid reentrancy_key: is not valid UTF-8/],
    ];
    for (const [call, message] of cases) {
      await assert.rejects(call, (e: Error) => e instanceof InvalidArgumentError && message.test(e.message));
    }
    nowhere.close();
  });

  test('are worded as the daemon words them', async () => {
    // The daemon's own answer to the same bad names, through the raw stub.
    const raw = new LockClient(process.env.REDLOCKD_ADDR!, credentials.createInsecure());
    const token = process.env.REDLOCKD_TOKEN;
    const metadata = new Metadata();
    if (token) metadata.set('authorization', `Bearer ${token}`);
    for (const bad of ['', 'a\nb', 'nul\0', 'del\u007f', 'x'.repeat(300)]) {
      const daemon = await new Promise<string>((resolve) =>
        raw.acquire(
          { resource: bad, owner: '', mode: LockMode.LOCK_MODE_EXCLUSIVE, permits: 0, reentrancyKey: '' },
          metadata,
          (error) => resolve(error?.details ?? 'accepted'),
        ),
      );
      const ours = await client.acquire(bad).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      assert.equal(ours, daemon, `for ${JSON.stringify(bad)}`);
    }
    // A shared permit and a key too long, the same way (names the daemon never sees: it refuses first).
    const name = resource();
    for (const [mode, permits, reentrancyKey] of [
      [LockMode.LOCK_MODE_SHARED, 2, ''],
      [LockMode.LOCK_MODE_EXCLUSIVE, 0, 'k'.repeat(129)],
    ] as const) {
      const daemon = await new Promise<string>((resolve) =>
        raw.acquire({ resource: name, owner: '', mode, permits, reentrancyKey }, metadata, (error) => resolve(error?.details ?? 'accepted')),
      );
      const shared = mode === LockMode.LOCK_MODE_SHARED;
      const ours = await client.acquire(name, { shared, permits, reentrancyKey }).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      assert.equal(ours, daemon, `for permits ${permits}, shared ${shared}`);
    }
    raw.close();
  });

  test('a TTL outside the daemon range is refused by the daemon, naming ttl and the range', async () => {
    await assert.rejects(
      client.acquire(resource(), { ttl: 1 }),
      (e: Error) => e instanceof InvalidArgumentError && /^invalid ttl: 1ms is outside the allowed range \[/.test(e.message),
    );
  });
});
