// Hold sessions: hand-off, release on every way out, a killed holder, a
// lock the daemon gives up.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { Client, HeldLock, LockLostError, NotAcquiredError } from '@redlockd/client';
import { resource, sleep } from './helpers';

const client = new Client();

/** Whether someone else could take `name` now (and gives it back at once). */
async function free(name: string): Promise<boolean> {
  const lease = await client.acquire(name, { ttl: 1_000 });
  if (lease) await lease.release();
  return lease !== null;
}

describe('hold', () => {
  after(() => client.close());

  test('a second holder waits out its wait and gets NotAcquiredError naming what the masters said', async () => {
    const name = resource();
    await using held = await client.hold(name, { ttl: 5_000 });
    assert.ok(held instanceof HeldLock);
    await assert.rejects(client.hold(name, { ttl: 5_000, wait: 300 }), (e: Error) => {
      assert.ok(e instanceof NotAcquiredError);
      assert.equal(e.reason, 'FAILURE_REASON_TAKEN');
      assert.ok(e.nodes.filter((n) => n === 'taken').length >= 3, String(e.nodes));
      return true;
    });
  });

  test('waiters get the lock in FIFO order, each with a larger token', async () => {
    const name = resource();
    const order: Array<[string, bigint]> = [];
    const first = await client.hold(name, { ttl: 5_000 });
    const waiter = (label: string) =>
      client.using(name, { ttl: 5_000, wait: 30_000 }, async (signal, lock) => {
        assert.equal(signal.aborted, false);
        order.push([label, lock.fencingToken]);
        await sleep(100);
      });
    const second = waiter('second');
    await sleep(400); // lines the waiters up; no timing is asserted
    const third = waiter('third');
    await sleep(400);
    assert.equal(await first.release(), true);
    await Promise.all([second, third]);
    assert.deepEqual(order.map(([label]) => label), ['second', 'third']);
    assert.ok(first.fencingToken < order[0][1] && order[0][1] < order[1][1]);
  });

  test('await using releases at the end of the block, and when the block throws', async () => {
    const name = resource();
    {
      await using lock = await client.hold(name, { ttl: 30_000 });
      assert.equal(await free(name), false);
      assert.equal(lock.lost, false);
    }
    // TTL 30 s: only the release freed it this soon.
    assert.equal(await free(name), true, 'the lock outlived its block');
    await assert.rejects(
      (async () => {
        await using lock = await client.hold(name, { ttl: 30_000 });
        void lock;
        throw new Error('the work failed');
      })(),
      /the work failed/,
    );
    assert.equal(await free(name), true, 'a block that threw kept its lock');
  });

  test('using() releases when the routine throws, and returns what it returns', async () => {
    const name = resource();
    await assert.rejects(
      client.using(name, { ttl: 30_000 }, async () => {
        throw new Error('the work failed');
      }),
      /the work failed/,
    );
    assert.equal(await free(name), true, 'a routine that threw kept its lock');
    assert.equal(await client.using(name, { ttl: 30_000 }, async (_signal, lock) => lock.fencingToken > 0n), true);
    assert.equal(await free(name), true);
  });

  test('a lock the daemon gives up (max_hold used up) aborts the signal, and using() rejects with LockLostError', async () => {
    const name = resource();
    let aborted = false;
    await assert.rejects(
      client.using(name, { ttl: 5_000, maxHold: 400 }, async (signal) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        aborted = signal.reason instanceof LockLostError;
        return 'the routine succeeded';
      }),
      (e: Error) => e instanceof LockLostError && /max_hold/.test(e.message),
    );
    assert.ok(aborted, 'the signal was not aborted with a LockLostError');
    assert.equal(await free(name), true);
  });

  test('an aborted signal gives up the wait, and releases the lock once held', async () => {
    const name = resource();
    const held = await client.hold(name, { ttl: 5_000 });
    const controller = new AbortController();
    const waiting = client.hold(name, { ttl: 5_000, wait: 30_000, signal: controller.signal });
    await sleep(200);
    controller.abort(new Error('no longer needed'));
    await assert.rejects(waiting, /no longer needed/);
    await held.release();
    const mine = new AbortController();
    const lock = await client.hold(name, { ttl: 30_000, signal: mine.signal });
    mine.abort(new Error('shutting down'));
    assert.equal(lock.signal.aborted, true, 'the work under the lock was not told to stop');
    assert.match(String(lock.signal.reason), /shutting down/);
    assert.equal(await lock.release(), false, 'a lock given up midway was reported as held to the end');
    assert.equal(await free(name), true, 'the abort did not release the lock');
  });

  test('a client process killed with kill -9 frees its lock at once', async () => {
    const name = resource();
    const script = `
      const { Client } = require('@redlockd/client');
      new Client().hold(${JSON.stringify(name)}, { ttl: 30000 }).then(() => console.log('held'));`;
    const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], cwd: __dirname });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d) => (String(d).includes('held') ? resolve() : undefined));
        holder.on('exit', () => reject(new Error('the holder exited')));
      });
      assert.equal(await free(name), false);
      holder.kill('SIGKILL');
      // TTL 30 s: only the daemon seeing the stream break frees it this soon.
      const lease = await client.acquire(name, { ttl: 10_000, wait: 5_000 });
      assert.ok(lease, 'the killed holder kept its lock');
      await lease.release();
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
