// Several resources at once: acquireMany (all or none), each member an
// ordinary Lease, releaseMany, and the set's checks, against a real daemon
// and five real masters.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { credentials, Metadata, status } from '@grpc/grpc-js';
import { Client, InvalidArgumentError, Lease, MAX_SET } from '@redlockd/client';
import { LockClient } from '@redlockd/client/proto';
import { lockValue, masterPorts, resource, sleep } from './helpers';

const client = new Client();

const members = (base: string, ...names: string[]): string[] => names.map((name) => `${base}/${name}`);

/** Each name is free: a plain acquire gets it (and gives it back). */
async function assertFree(...names: string[]): Promise<void> {
  for (const name of names) {
    const lease = await client.acquire(name, { ttl: 10_000 });
    assert.ok(lease, `${name} is held`);
    assert.equal(await lease.release(), true);
  }
}

async function assertHeld(...names: string[]): Promise<void> {
  for (const name of names) assert.equal(await client.acquire(name, { ttl: 10_000 }), null, `${name} is free`);
}

/**
 * The lock values the masters hold for `names` (a lock key is
 * `redlockd:{<tag>}:lock:<resource>`, its value the first line), and on how many
 * masters each name is held.
 */
function onMasters(names: string[]): { values: Set<string>; copies: number[] } {
  const values = new Set<string>();
  const copies = names.map((name) => {
    let held = 0;
    for (const port of masterPorts()) {
      const stored = lockValue(port, name);
      if (stored) {
        values.add(stored.split('\n')[0]);
        held += 1;
      }
    }
    return held;
  });
  return { values, copies };
}

describe('acquireMany: several resources at once', () => {
  after(() => client.close());

  test('a set of c, a, b, a is granted as three leases sorted a, b, c, with one value and a token each', async () => {
    const [a, b, c] = members(resource(), 'a', 'b', 'c');
    const earlier = new Map<string, bigint>();
    for (const name of [a, b, c]) {
      const lease = await client.acquire(name, { ttl: 10_000 });
      assert.ok(lease);
      assert.equal(await lease.release(), true);
      earlier.set(name, lease.fencingToken);
    }
    const leases = await client.acquireMany([c, a, b, a], { ttl: 10_000, owner: 'node-set' });
    assert.ok(leases, 'a free set was refused');
    assert.deepEqual(leases.map((lease) => lease.resource), [a, b, c], 'not sorted, or repeats kept');
    assert.ok(leases.every((lease) => lease instanceof Lease));
    // Each member's token is its resource's: above that resource's last one.
    // (Tokens rise per resource, from the counter of its bucket, so members in
    // different buckets may share a value: docs/design.md#the-fencing-token.)
    for (const lease of leases) {
      assert.ok(lease.fencingToken > earlier.get(lease.resource)!, `${lease.resource}'s token is below the resource's last one`);
    }
    assert.ok(leases.every((lease) => lease.remaining > 9_000 && lease.remaining <= 10_000));
    const { values, copies } = onMasters([a, b, c]);
    assert.ok(copies.every((n) => n >= 3), `held on ${copies} masters`);
    assert.equal(values.size, 1, 'the members hold more than one value');
    assert.doesNotMatch(JSON.stringify(leases), new RegExp([...values][0]), 'the value was shown');
    const view = await client.inspect(b);
    assert.equal(view.holder?.owner, 'node-set');
    assert.deepEqual(view.setMembers, [a, b, c]);
    await assertHeld(a, b, c);
    assert.equal(await client.releaseMany(leases), true);
    await assertFree(a, b, c);
  });

  test('while one member is held by a plain acquire, the set is null and holds none of the others, also while it waits', async () => {
    const [a, b, c] = members(resource(), 'a', 'b', 'c');
    const holder = await client.acquire(b, { ttl: 10_000 });
    assert.ok(holder);
    assert.equal(await client.acquireMany([a, b, c], { ttl: 10_000 }), null, 'granted while a member is held');
    await assertFree(a, c);
    // Waiting never holds part of the set: its free members stay free while
    // it waits; once the held one is released, the whole set is granted.
    let settled = false;
    const waiting = client.acquireMany([a, b, c], { ttl: 10_000, wait: 10_000 }).finally(() => (settled = true));
    await sleep(500);
    assert.equal(settled, false, 'the set did not wait');
    await assertFree(a, c);
    assert.equal(await holder.release(), true);
    const leases = await waiting;
    assert.ok(leases, 'the set was not granted after the holder released');
    assert.deepEqual(leases.map((lease) => lease.resource), [a, b, c]);
    assert.ok(leases[1].fencingToken > holder.fencingToken);
    assert.equal(await client.releaseMany(leases), true);
  });

  test('each member is an ordinary Lease: extended and released on its own, releasing one frees only it', async () => {
    const [a, b, c] = members(resource(), 'a', 'b', 'c');
    const leases = await client.acquireMany([a, b, c], { ttl: 10_000 });
    assert.ok(leases);
    const [first, second, third] = leases;
    assert.equal(await second.extend(20_000), true);
    assert.ok(second.remaining > 19_000);
    assert.equal(await first.release(), true);
    const again = await client.acquire(a, { ttl: 10_000 });
    assert.ok(again, 'releasing one member did not free it');
    assert.ok(again.fencingToken > first.fencingToken);
    assert.equal(await again.release(), true);
    await assertHeld(b, c);
    // releaseMany of the rest; the first keeps its own answer.
    assert.equal(await client.releaseMany([second, third]), true);
    assert.equal(await third.release(), false, "a member's release() after releaseMany asked again");
    assert.equal(await second.extend(), false, 'a released lease extended');
    await assertFree(b, c);
  });

  test('extendMany extends a set in one call and moves each extended lease on; false once a member is released', async () => {
    const [a, b, c] = members(resource(), 'a', 'b', 'c');
    const leases = await client.acquireMany([a, b, c], { ttl: 1_000 });
    assert.ok(leases);
    assert.equal(await client.extendMany(leases, 20_000), true);
    for (const lease of leases) assert.ok(lease.remaining > 19_000, `${lease.resource} was not moved on`);
    await sleep(1_500);
    await assertHeld(a, b, c);
    assert.equal(await client.extendMany(leases), true, "the set's own TTL (20 s) by default");
    assert.equal(await leases[0].release(), true);
    assert.equal(await client.extendMany(leases, 20_000), false, 'a released member was extended');
    assert.equal(leases[0].remaining, 0, 'the released member kept its validity');
    assert.ok(leases[1].remaining > 19_000);
    await assert.rejects(client.extendMany(leases, -1), /^InvalidArgumentError: invalid ttl: /);
    assert.equal(await client.releaseMany(leases.slice(1)), true);
  });

  test('releaseMany says false when a member was no longer held', async () => {
    const [a, b] = members(resource(), 'a', 'b');
    const leases = await client.acquireMany([a, b], { ttl: 10_000 });
    assert.ok(leases);
    const [first, second] = leases;
    assert.equal(await first.release(), true);
    assert.equal(await client.releaseMany([first, second]), false);
    assert.equal(await second.release(), false, 'the member released by releaseMany was released again');
    await assertFree(a, b);
  });

  test('17 resources and bad members are refused before sending, in the daemon words', async () => {
    const base = resource();
    const seventeen = Array.from({ length: 17 }, (_, i) => `${base}/${String(i).padStart(2, '0')}`);
    const cases: Array<[string[], string]> = [
      [seventeen, 'invalid resources: 17 names; 1 to 16 are allowed'],
      [Array(17).fill(`${base}/a`), 'invalid resources: 17 names; 1 to 16 are allowed'],
      [[], 'invalid resources: 0 names; 1 to 16 are allowed'],
      [[`${base}/a`, ''], 'invalid resources: [1] is 0 bytes long; it must be 1 to 256 bytes of printable UTF-8'],
      [[`${base}/a`, `${base}/b`, 'tab\there'], "invalid resources: [2] contains the control character '\\t'; only printable UTF-8 is allowed"],
    ];
    const raw = new LockClient(process.env.REDLOCKD_ADDR!, credentials.createInsecure());
    const metadata = new Metadata();
    const nowhere = new Client({ address: '127.0.0.1:1' }); // nothing listens: nothing may be sent
    for (const [bad, message] of cases) {
      const daemon = await new Promise<[number | undefined, string]>((resolve) =>
        raw.acquireMany({ resources: bad, owner: '' }, metadata, (error) => resolve([error?.code, error?.details ?? 'accepted'])),
      );
      assert.deepEqual(daemon, [status.INVALID_ARGUMENT, message]);
      await assert.rejects(nowhere.acquireMany(bad), (e: Error) => e instanceof InvalidArgumentError && e.message === message);
    }
    raw.close();
    await assert.rejects(nowhere.acquireMany('examples/one' as unknown as string[]), /invalid resources: must be an array of strings, not string$/);
    await assert.rejects(nowhere.acquireMany([`${base}/a`], { wait: -1 }), /invalid wait: -1ms/);
    for (const option of [{ shared: true }, { permits: 2 }, { reentrancyKey: 'k' }]) {
      await assert.rejects(nowhere.acquireMany([`${base}/a`], option as object), /a set's locks are exclusive/);
    }
    await assert.rejects(nowhere.releaseMany([]), /invalid leases: 0 leases; 1 to 16 are allowed$/);
    nowhere.close();
    assert.equal(MAX_SET, 16);
    const leases = await client.acquireMany(seventeen.slice(0, 16), { ttl: 10_000 });
    assert.equal(leases?.length, 16, 'sixteen names were refused');
    const other = await client.acquire(`${base}/other`, { ttl: 10_000 });
    assert.ok(leases && other);
    await assert.rejects(client.releaseMany([leases[0], other]), /invalid leases: they hold more than one value/);
    assert.equal(await client.releaseMany(leases), true);
    assert.equal(await other.release(), true);
  });
});
