// lockDelay on acquire (docs/design.md#lock-delay), against a real daemon:
// a lease never released stays on the masters that long past its validity;
// a release frees it at once; beyond lock.max_lock_delay is refused naming
// the field.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { performance } from 'node:perf_hooks';
import { Client, InvalidArgumentError } from '@redlockd/client';
import { resource } from './helpers';

const client = new Client();
const TTL = 1_000;
const DELAY = 2_000;

describe('lockDelay on acquire', () => {
  test('an unreleased lease with a lock delay keeps others out past its ttl', async () => {
    const name = resource();
    const taken = performance.now();
    assert.ok(await client.acquire(name, { ttl: TTL, lockDelay: DELAY }));
    assert.equal(await client.acquire(name, { ttl: 1_000, wait: TTL + 500 }), null, 'taken before its ttl and delay ran out');
    const other = await client.acquire(name, { ttl: 1_000, wait: 5_000 });
    const waited = performance.now() - taken;
    assert.ok(other);
    await other.release();
    assert.ok(waited >= TTL + DELAY - 300 && waited < TTL + DELAY + 1_500, `taken ${waited} ms after the first acquire`);
  });

  test('a release frees a lease with a lock delay at once', async () => {
    const name = resource();
    const lease = await client.acquire(name, { ttl: TTL, lockDelay: 30_000 });
    assert.ok(lease);
    assert.equal(await lease.release(), true);
    const other = await client.acquire(name, { ttl: 1_000 });
    assert.ok(other, 'a release waited for the lock delay');
    await other.release();
  });

  test('a lock delay out of range is refused naming lock_delay', async () => {
    const name = resource();
    await assert.rejects(client.acquire(name, { lockDelay: 61_000 }), (e: Error) =>
      e instanceof InvalidArgumentError && e.message.startsWith('invalid lock_delay: 1m 1s is outside the allowed range [0s, 1m]'),
    );
    await assert.rejects(client.acquire(name, { lockDelay: -1 }), (e: Error) =>
      e instanceof InvalidArgumentError && e.message.startsWith('invalid lock_delay: -1ms is not a valid non-negative duration'),
    );
  });
});

after(() => client.close());
