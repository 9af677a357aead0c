// Needs the --secure daemon: mutual TLS and a bearer token (test.sh).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Client, PermissionDeniedError, UnauthenticatedError, UnavailableError } from '@redlockd/client';
import { resource } from './helpers';

test('TLS and a bearer token from the environment; a wrong token, a foreign prefix and a client without a certificate are refused', async () => {
  assert.ok(process.env.REDLOCKD_CA && process.env.REDLOCKD_TOKEN, 'needs the --secure daemon');
  const client = new Client();
  const name = resource();
  const lease = await client.acquire(name, { ttl: 10_000 });
  assert.ok(lease);
  assert.equal(await lease.release(), true);
  {
    await using lock = await client.hold(name, { ttl: 10_000 });
    assert.ok(lock.fencingToken > lease.fencingToken);
  }
  await assert.rejects(client.acquire(`outside/${name}`, { ttl: 10_000 }), PermissionDeniedError);
  // Elections: the tenant's prefixes apply to election names.
  {
    await using leadership = await client.campaign(name, { candidate: 'secure' });
    assert.equal((await client.leader(name)).term, leadership.term);
    for await (const state of client.observe(name)) {
      assert.equal(state.term, leadership.term);
      break; // leaving the loop ends the stream
    }
  }
  await assert.rejects(client.campaign(`outside/${name}`), PermissionDeniedError);
  await assert.rejects(client.observe(`outside/${name}`).next(), PermissionDeniedError);
  const stranger = new Client({ token: 'not-the-token-0123456789abcdefgh' });
  await assert.rejects(stranger.acquire(name, { ttl: 10_000 }), UnauthenticatedError);
  await assert.rejects(stranger.hold(name, { ttl: 10_000 }), UnauthenticatedError);
  stranger.close();
  // Mutual TLS: a client without a certificate does not get through.
  const anonymous = new Client({ tls: { ca: readFileSync(process.env.REDLOCKD_CA) } });
  await assert.rejects(anonymous.acquire(name, { ttl: 10_000 }), UnavailableError);
  anonymous.close();
  client.close();
});
