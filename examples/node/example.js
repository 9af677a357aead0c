'use strict';
// A fenced write with @redlockd/client. Holder A takes the lock, then
// stalls (a GC pause, a slow disk) past its validity; holder B takes the
// lock over and writes; A wakes up and writes under its expired lock. The
// store remembers the largest fencing token it has seen and refuses A.
//
//   bash examples/node/run.sh          # against a throwaway daemon, plain and --secure
const assert = require('node:assert/strict');
const { Client } = require('@redlockd/client');

/** A store that refuses writes carrying a token below one it has seen. */
class FencedStore {
  highest = -1n;
  rows = new Map();

  write(fencingToken, key, value) {
    if (fencingToken < this.highest) return false; // a stale holder: its lock was superseded
    this.highest = fencingToken;
    this.rows.set(key, value);
    return true;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const client = new Client(); // REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA/CERT/KEY
  const store = new FencedStore();
  const resource = 'examples/ledger';

  // A: a lease it must keep alive itself; contention would be null, not an error.
  const a = await client.acquire(resource, { ttl: 500, wait: 10_000 });
  assert.ok(a, 'A did not get the lock');
  await sleep(a.remaining + 300); // A stalls; its lock expires on the masters

  // B: a Hold session, kept alive by the daemon; `signal` aborts if it is lost.
  const b = await client.using(resource, { ttl: 5_000, wait: 10_000 }, async (signal, lock) => {
    signal.throwIfAborted();
    assert.ok(store.write(lock.fencingToken, 'balance', 100), 'B was refused');
    return lock.fencingToken; // a bigint: exact above 2^53
  });

  // A wakes up and writes as if it still held the lock: refused.
  assert.equal(store.write(a.fencingToken, 'balance', 0), false, 'the store took a stale token');
  // And A learns it: a release of an expired lock says false.
  assert.equal(await a.release(), false);
  assert.equal(store.rows.get('balance'), 100);
  client.close();
  console.log(`ok: B's token ${b} > A's ${a.fencingToken}; A's stale write was refused`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
