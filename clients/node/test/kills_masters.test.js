'use strict';
// Kills three masters: needs a daemon of its own (test.sh gives it one).
const test = require('node:test');
const assert = require('node:assert/strict');
const { performance } = require('node:perf_hooks');
const redlockd = require('..');
const { resource, masterPids } = require('./helpers');

test('with three masters killed, lock.signal aborts before validUntil, and UNAVAILABLE says what each master said', async () => {
  const client = new redlockd.Client();
  const name = resource();
  const lock = await client.hold(name, { ttl: 2000 });
  let lastValid = lock.validUntil;
  const follow = setInterval(() => {
    if (!lock.lost) lastValid = Math.max(lastValid, lock.validUntil);
  }, 5);
  const lost = new Promise((resolve) => lock.signal.addEventListener('abort', () => resolve(performance.now())));
  for (const pid of masterPids().slice(0, 3)) process.kill(pid, 'SIGKILL');
  const lostAt = await Promise.race([lost, new Promise((_, reject) => setTimeout(reject, 10000, new Error('never lost')))]);
  clearInterval(follow);
  assert.ok(lostAt <= lastValid, `told lost ${lostAt - lastValid} ms after the validity ran out`);
  assert.ok(lock.signal.reason instanceof redlockd.LockLostError);
  await assert.rejects(lock.release(), redlockd.LockLostError);
  const started = performance.now();
  await assert.rejects(client.acquire(`${name}-2`, { ttl: 5000, wait: 1000 }), (e) => {
    assert.ok(e instanceof redlockd.UnavailableError);
    assert.equal(e.needed, 3);
    assert.equal(Object.keys(e.nodes).length, 5);
    return true;
  });
  assert.ok(performance.now() - started >= 800, 'the wait was not retried');
  client.close();
});
