// Kills three masters under a leader: it needs a daemon of its own
// (test.sh gives it one).

import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { Client, LeadershipLostError, UnavailableError } from '@redlockd/client';
import { election, masterPids, sleep, within } from './helpers';

test('with three masters killed, the leadership is lost before its valid_for runs out; leader() and observe() say UNAVAILABLE', async () => {
  const client = new Client();
  const name = election();
  const leadership = await client.campaign(name, { candidate: 'pod-a', ttl: 2_000 });
  let lastValid = leadership.validUntil;
  const follow = setInterval(() => {
    if (!leadership.lost) lastValid = Math.max(lastValid, leadership.validUntil);
  }, 5);
  const lost = new Promise<number>((resolve) => leadership.signal.addEventListener('abort', () => resolve(performance.now())));
  for (const pid of masterPids().slice(0, 3)) process.kill(pid, 'SIGKILL');
  const lostAt = await within(lost, 10_000, 'the lost signal');
  clearInterval(follow);
  assert.ok(lostAt <= lastValid, `told lost ${lostAt - lastValid} ms after the validity ran out`);
  assert.ok(leadership.signal.reason instanceof LeadershipLostError, String(leadership.signal.reason));
  // The daemon's LOST, not the client's own deadline.
  assert.doesNotMatch(leadership.signal.reason.message, /validity ran out/);
  assert.equal(await leadership.resign(), false);
  await assert.rejects(leadership[Symbol.asyncDispose](), LeadershipLostError);

  await assert.rejects(client.leader(name), UnavailableError);
  // An observer starts from a known state: without a majority, its first read is an error.
  await assert.rejects(client.observe(name).next(), UnavailableError);
  // A candidate waits on without a quorum (the daemon tries again and again) until it gives up.
  const giveUp = new AbortController();
  const waiting = client.campaign(`${name}-2`, { ttl: 2_000, signal: giveUp.signal });
  const outcome = waiting.then(() => 'elected', (error: unknown) => error);
  await sleep(1_000);
  giveUp.abort(new Error('given up'));
  assert.match(String(await within(outcome, 5_000, 'the campaign given up')), /given up/);
  client.close();
});
