// `await using`, compiled by tsc (test.sh) for Node 20, which lacks the
// syntax: leaving the block releases the lock, also when it throws.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '..';

test('await using releases the lock at the end of the block and when the block throws', async () => {
  const client = new Client();
  const name = `examples/node-using-${process.pid}`;
  {
    await using lock = await client.hold(name, { ttl: 30_000 });
    assert.ok(lock.fencingToken > 0n);
  }
  // TTL 30 s: only the dispose freed it this soon.
  const again = await client.acquire(name, { ttl: 10_000, wait: 5_000 });
  if (!again) throw new Error('the lock outlived its block');
  await again.release();
  await assert.rejects(
    (async () => {
      await using lock = await client.hold(name, { ttl: 30_000 });
      void lock;
      throw new Error('the work failed');
    })(),
    /the work failed/,
  );
  const after = await client.acquire(name, { ttl: 10_000, wait: 5_000 });
  if (!after) throw new Error('a block that threw kept its lock');
  await after.release();
  client.close();
});
