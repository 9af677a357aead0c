'use strict';
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const redlockd = require('..');
const { resource, sleep, masterPorts } = require('./helpers');

const client = new redlockd.Client();


describe('the client against a real daemon', () => {
  // A suite's hook: the root's would wait for an exit the open channel prevents.
  after(() => client.close());

  test('a second holder is refused and the next one gets a larger token', async () => {
    const name = resource();
    const first = await client.acquire(name, { ttl: 10000 });
    assert.ok(first);
    assert.equal(typeof first.fencingToken, 'bigint');
    assert.ok(first.validUntil > performance.now());
    assert.equal(await client.acquire(name, { ttl: 10000 }), null, 'two holders');
    assert.equal(await first.extend(20000), true);
    assert.equal(await first.release(), true);
    const second = await client.acquire(name, { ttl: 10000 });
    assert.ok(second.fencingToken > first.fencingToken);
    assert.ok(!JSON.stringify(second).includes(second._value), 'the value was shown');
    await second.release();
  });

  test('hold with a wait hands the lock over in FIFO order', async () => {
    const name = resource();
    const order = [];
    const holding = await client.hold(name, { ttl: 5000 });
    const waiter = (label) =>
      client.using(name, { ttl: 5000, wait: 30000 }, async (signal, lock) => {
        assert.equal(signal.aborted, false);
        order.push([label, lock.fencingToken]);
        await sleep(100);
      });
    const second = waiter('second');
    await sleep(500); // orders the waiters; no timing is asserted
    const third = waiter('third');
    await sleep(500);
    assert.equal(await holding.release(), true);
    await Promise.all([second, third]);
    assert.deepEqual(order.map(([label]) => label), ['second', 'third']);
    assert.ok(holding.fencingToken < order[0][1] && order[0][1] < order[1][1]);
  });

  test('disposing a lock releases it, and using() releases on an exception', async () => {
    const name = resource();
    // What `await using` does at the end of its block (test/dispose.test.ts
    // runs the syntax itself, compiled by tsc for Node 20).
    const lock = await client.hold(name, { ttl: 30000 });
    assert.ok(lock.fencingToken > 0n);
    await lock[Symbol.asyncDispose]();
    // TTL 30 s: only a release frees it this soon.
    const again = await client.acquire(name, { ttl: 10000, wait: 5000 });
    assert.ok(again, 'a session disposed at the end of its block kept its lock');
    await again.release();
    await assert.rejects(
      client.using(name, { ttl: 30000 }, async () => {
        throw new Error('the work failed');
      }),
      /the work failed/,
    );
    const after = await client.acquire(name, { ttl: 10000, wait: 5000 });
    assert.ok(after, 'a session whose routine threw kept its lock');
    await after.release();
  });

  test('hold rejects with NotAcquiredError when the wait runs out, and a signal gives up the wait', async () => {
    const name = resource();
    const taken = await client.acquire(name, { ttl: 10000 });
    await assert.rejects(client.hold(name, { ttl: 5000, wait: 300 }), redlockd.NotAcquiredError);
    const controller = new AbortController();
    const waiting = client.hold(name, { ttl: 5000, wait: 30000, signal: controller.signal });
    controller.abort(new Error('no longer needed'));
    await assert.rejects(waiting, /no longer needed/);
    await taken.release();
  });

  test('a client process killed with kill -9 frees its lock at once', async () => {
    const name = resource();
    const script = `
      const redlockd = require(${JSON.stringify(path.join(__dirname, '..'))});
      new redlockd.Client().hold(${JSON.stringify(name)}, { ttl: 30000 }).then(() => {
        console.log('held');
        setInterval(() => {}, 1000);
      });`;
    const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve, reject) => {
        holder.stdout.on('data', (d) => (String(d).includes('held') ? resolve() : null));
        holder.on('exit', () => reject(new Error('the holder exited')));
      });
      assert.equal(await client.acquire(name, { ttl: 10000 }), null);
      holder.kill('SIGKILL');
      // TTL 30 s: only the daemon seeing the stream break frees it this soon.
      const lease = await client.acquire(name, { ttl: 10000, wait: 10000 });
      assert.ok(lease);
      await lease.release();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  test('tokens above 2^53 are kept exact as bigints', async () => {
    const counter = 2n ** 53n / 16n + 12345n;
    for (const port of masterPorts()) {
      execFileSync('redis-cli', ['-p', String(port), 'SET', 'redlockd:fence', String(counter)]);
    }
    const lease = await client.acquire(resource(), { ttl: 10000 });
    // The counter every master returned, and the index of the first of them
    // that answered in time (the round ends at a quorum).
    assert.equal(lease.fencingToken / 16n, counter + 1n);
    assert.ok(lease.fencingToken % 16n < 5n);
    assert.ok(lease.fencingToken > 2n ** 53n);
    await lease.release();
  });

  test('bad arguments fail before anything is sent, with the daemon words', async () => {
    const nowhere = new redlockd.Client({ address: '127.0.0.1:1' });
    await assert.rejects(nowhere.acquire(''), (e) => e instanceof redlockd.InvalidArgumentError && /resource.*1 to 256 bytes/.test(e.message));
    await assert.rejects(nowhere.acquire('r', { ttl: -1 }), redlockd.InvalidArgumentError);
    await assert.rejects(nowhere.acquire('r', { owner: 'x'.repeat(300) }), /owner/);
    nowhere.close();
    await assert.rejects(client.acquire(resource(), { ttl: 1 }), (e) => e instanceof redlockd.InvalidArgumentError && /ttl/.test(e.message));
  });
});
