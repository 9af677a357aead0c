// Freezes the daemon with SIGSTOP: it needs a daemon of its own (test.sh
// gives it one). A frozen daemon sends nothing, not even LOST: the client
// must stop leading (and holding) on its own deadline, the last valid_for
// counted from when its message arrived, and say so before that deadline,
// by at most the margin (100 ms: src/session.ts, LOST_MARGIN_MS).

import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { Client, LeadershipLostError, LockLostError } from '@redlockd/client';
import { daemonPid, election, resource, within } from './helpers';

/** When `signal` aborts (performance.now()). */
const abortedAt = (signal: AbortSignal): Promise<number> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(performance.now())));

test('a leader and a holder whose daemon is frozen are told before their own deadline', async () => {
  const client = new Client();
  const leadership = await client.campaign(election(), { candidate: 'pod-a', ttl: 1_500 });
  const lock = await client.hold(resource(), { ttl: 1_500 });
  const leaderLost = abortedAt(leadership.signal);
  const lockLost = abortedAt(lock.signal);
  process.kill(daemonPid(), 'SIGSTOP');
  try {
    const frozenAt = performance.now();
    const [leaderAt, lockAt] = await within(Promise.all([leaderLost, lockLost]), 5_000, 'the client-side deadlines');
    // validUntil is the last deadline the daemon gave (an extension on its
    // way at the freeze may have moved it on).
    for (const [what, at, until] of [['leader', leaderAt, leadership.validUntil], ['holder', lockAt, lock.validUntil]] as const) {
      assert.ok(until > frozenAt, `${what}: valid until ${until - frozenAt} ms after the freeze`);
      console.log(`frozen-daemon: the ${what} was told ${(until - at).toFixed(1)} ms before its deadline`);
      // Before its deadline, and not earlier than the margin (a timer may fire a millisecond early).
      assert.ok(at < until, `the ${what} was told ${at - until} ms after its deadline`);
      assert.ok(until - at <= 100 + 1, `the ${what} was told ${until - at} ms before its deadline`);
    }
    assert.ok(leadership.signal.reason instanceof LeadershipLostError);
    assert.match(leadership.signal.reason.message, /validity ran out with no extension from the daemon/);
    assert.ok(lock.signal.reason instanceof LockLostError);
    assert.match(lock.signal.reason.message, /validity ran out/);
    assert.equal(leadership.remaining, 0);
  } finally {
    process.kill(daemonPid(), 'SIGCONT');
  }
  assert.equal(await leadership.resign(), false);
  assert.equal(await lock.release(), false);
  client.close();
});
