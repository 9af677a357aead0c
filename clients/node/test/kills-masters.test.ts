// Kills three masters: it needs a daemon of its own (test.sh gives it one).

import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { Client, LockLostError, UnavailableError } from '@redlockd/client';
import { masterPids, resource, within } from './helpers';

test('with three masters killed, lock.signal aborts before validUntil, and UNAVAILABLE is retried then says what each master said', async () => {
  const client = new Client();
  const name = resource();
  const lock = await client.hold(name, { ttl: 2_000 });
  let lastValid = lock.validUntil;
  const follow = setInterval(() => {
    if (!lock.lost) lastValid = Math.max(lastValid, lock.validUntil);
  }, 5);
  const lost = new Promise<number>((resolve) => lock.signal.addEventListener('abort', () => resolve(performance.now())));
  for (const pid of masterPids().slice(0, 3)) process.kill(pid, 'SIGKILL');
  const lostAt = await within(lost, 10_000, 'the lost signal');
  clearInterval(follow);
  assert.ok(lostAt <= lastValid, `told lost ${lostAt - lastValid} ms after the validity ran out`);
  assert.ok(lock.signal.reason instanceof LockLostError);
  assert.match((lock.signal.reason as Error).message, /lost/);
  assert.equal(await lock.release(), false);
  await assert.rejects(lock[Symbol.asyncDispose](), LockLostError);

  const started = performance.now();
  await assert.rejects(client.acquire(`${name}-2`, { ttl: 5_000, wait: 1_000 }), (e: Error) => {
    assert.ok(e instanceof UnavailableError, String(e));
    assert.equal(e.needed, 3);
    assert.equal(e.nodes.length, 5);
    assert.ok(e.nodes.filter((n) => n === 'granted').length < 3, String(e.nodes));
    return true;
  });
  assert.ok(performance.now() - started >= 700, 'the wait was not retried after UNAVAILABLE');
  await assert.rejects(client.hold(`${name}-3`, { ttl: 5_000, wait: 0 }), UnavailableError);
  const holdStarted = performance.now();
  await assert.rejects(client.hold(`${name}-4`, { ttl: 5_000, wait: 1_000 }), UnavailableError);
  assert.ok(performance.now() - holdStarted >= 700, 'the session was not retried after UNAVAILABLE');
  client.close();
});
