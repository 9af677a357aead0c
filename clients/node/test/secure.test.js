'use strict';
// Needs the --secure daemon: mutual TLS and a bearer token (test.sh).
const test = require('node:test');
const assert = require('node:assert/strict');
const redlockd = require('..');
const { resource } = require('./helpers');

test('TLS and a bearer token from the environment; a wrong token and a foreign prefix are refused', async () => {
  assert.ok(process.env.REDLOCKD_CA && process.env.REDLOCKD_TOKEN, 'needs the --secure daemon');
  const client = new redlockd.Client();
  const name = resource();
  const lease = await client.acquire(name, { ttl: 10000 });
  assert.ok(lease);
  await lease.release();
  await assert.rejects(client.acquire(`outside/${name}`, { ttl: 10000 }), redlockd.PermissionDeniedError);
  const stranger = new redlockd.Client({ token: 'not-the-token-0123456789abcdefgh' });
  await assert.rejects(stranger.acquire(name, { ttl: 10000 }), redlockd.UnauthenticatedError);
  stranger.close();
  client.close();
});
