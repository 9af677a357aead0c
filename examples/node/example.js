'use strict';
// A fenced write with the redlockd Node client: two holders take turns on
// one lock, and a store that remembers the largest fencing token it has seen
// refuses a write from a holder whose lock has been superseded.
//
//   bash examples/node/run.sh          # against a throwaway daemon
const assert = require('node:assert/strict');
const { Client } = require('@redlockd/client');

class FencedStore {
  constructor() {
    this.highest = -1n;
    this.rows = [];
  }

  write(token, row) {
    if (token < this.highest) return false; // a stale holder: its lock was superseded
    this.highest = token;
    this.rows.push(row);
    return true;
  }
}

async function main() {
  const store = new FencedStore();
  const client = new Client(); // REDLOCKD_ADDR (+ REDLOCKD_TOKEN and TLS files, if set)
  const resource = 'examples/ledger';

  // node-redlock's `using`: the signal aborts if the lock is lost, and the
  // lock is released afterwards.
  const first = await client.using(resource, { ttl: 5000, wait: 10000 }, async (signal, lock) => {
    assert.ok(store.write(lock.fencingToken, 'first'));
    return lock.fencingToken; // a bigint: exact above 2^53
  });

  // acquire/release by hand; contention is a value (null), not an error.
  const lease = await client.acquire(resource, { ttl: 5000, wait: 10000 });
  assert.ok(lease && lease.fencingToken > first);
  assert.equal(await client.acquire(resource, { ttl: 5000 }), null, 'a second holder got the lock');
  assert.ok(store.write(lease.fencingToken, 'second'));
  assert.ok(await lease.release());

  // The first holder, paused past its lock, comes back: the store says no.
  assert.equal(store.write(first, 'stale'), false, 'the store took a stale token');
  assert.deepEqual(store.rows, ['first', 'second']);
  client.close();
  console.log(`ok: tokens ${first} < ${lease.fencingToken}; the stale write was refused`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
