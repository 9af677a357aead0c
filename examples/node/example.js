#!/usr/bin/env node
// A redlockd client in Node.js, with @grpc/grpc-js and @grpc/proto-loader.
//
//   node example.js [host:port]      (default: $REDLOCKD_ADDR or 127.0.0.1:7420)
//
// It shows, against a running daemon (`redlockd dev`, or examples/node/run.sh):
//   (a) Acquire -> a fenced write to a toy storage -> Release, counting the
//       lease's validity from the moment the request was SENT (the client rule)
//       and refusing to write once that validity has run out;
//   (b) a Hold session (bidirectional stream): ACQUIRED, EXTENDED..., then a
//       half-close and RELEASED with held_to_end, keeping its own validity
//       deadline from each message's receipt (the LOST contract);
//   (c) contention: a second Acquire while the lock is held gets
//       acquired=false with FAILURE_REASON_TAKEN, and every later lease of the
//       resource carries a larger fencing token;
//   (d) a Pipeline stream shared by 8 concurrent calls, each reply matched to
//       its call by id; a bad call answered with a CallError while the stream
//       goes on; a half-close ends it cleanly.
// It exits 0 when everything happened as expected, 1 otherwise.
//
// A daemon with TLS and tenants (README, Security) takes, from the environment:
//   REDLOCKD_CA            the CA that signed the daemon's certificate (PEM): TLS
//   REDLOCKD_CERT/_KEY     this client's certificate and key, for mutual TLS
//   REDLOCKD_TOKEN         the tenant's bearer token, sent on every call
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// --- Loading the API --------------------------------------------------------

// google/protobuf/duration.proto, imported by lock.proto, is one of the
// well-known types protobufjs bundles, so the include dirs only need the
// repository's proto/ folder.
const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const definition = protoLoader.loadSync('redlockd/v1/lock.proto', {
  includeDirs: [PROTO_ROOT],
  keepCase: true, // field names as in the .proto: fencing_token, held_to_end
  longs: String, // uint64 fencing tokens (~2.8e16) exceed 2^53: keep them exact
  enums: String, // 'FAILURE_REASON_TAKEN', 'HOLD_EVENT_ACQUIRED', ...
  defaults: true,
  oneofs: true,
});
const { Lock } = grpc.loadPackageDefinition(definition).redlockd.v1;

// --- Small helpers ----------------------------------------------------------

/** Milliseconds -> google.protobuf.Duration. */
function duration(ms) {
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}

/** google.protobuf.Duration (seconds is an int64 string here) -> milliseconds. */
function millis(d) {
  if (!d) return 0;
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

/** Throws (and so fails the run) when an outcome is not the expected one. */
function expect(condition, what) {
  if (!condition) throw new Error(`unexpected: ${what}`);
}

/** Metadata for every call: the tenant's bearer token, when there is one. */
function auth() {
  const metadata = new grpc.Metadata();
  if (process.env.REDLOCKD_TOKEN) metadata.set('authorization', `Bearer ${process.env.REDLOCKD_TOKEN}`);
  return metadata;
}

/** Plain gRPC to a loopback sidecar; TLS (mutual with a client certificate)
 * when REDLOCKD_CA names the daemon's CA. */
function credentials() {
  const read = (variable) => (process.env[variable] ? fs.readFileSync(process.env[variable]) : null);
  if (!process.env.REDLOCKD_CA) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(read('REDLOCKD_CA'), read('REDLOCKD_KEY'), read('REDLOCKD_CERT'));
}

/** A unary call as a promise, with a gRPC deadline. */
function unary(client, method, request, timeoutMs) {
  return new Promise((resolve, reject) => {
    client[method](request, auth(), { deadline: Date.now() + timeoutMs }, (err, reply) =>
      err ? reject(err) : resolve(reply),
    );
  });
}

const log = (...args) => console.log('[example]', ...args);

// --- A storage that honours fencing tokens ----------------------------------

class StaleTokenError extends Error {}

/**
 * A toy in-memory storage: it remembers the highest fencing token it has seen
 * and rejects writes carrying a lower one. Tokens are compared as BigInt:
 * as JavaScript numbers, tokens above 2^53 would round and compare wrongly.
 */
class FencedStorage {
  constructor() {
    this.highest = -1n;
    this.data = new Map();
  }

  write(token, key, value) {
    const t = BigInt(token);
    if (t < this.highest) {
      throw new StaleTokenError(`token ${t} is lower than ${this.highest}: write of ${key} rejected`);
    }
    this.highest = t;
    this.data.set(key, value);
  }
}

// --- (a) Acquire, fenced write, Release -------------------------------------

class LeaseExpiredError extends Error {}

/**
 * Acquire, counting validity from the moment the request is sent. Returns
 * { acquired, lease, token, validUntil, reply }; validUntil is on the
 * performance.now() clock.
 */
async function acquire(client, resource, ttlMs, waitMs) {
  const sentAt = performance.now(); // BEFORE the call: the client rule
  const reply = await unary(
    client,
    'Acquire',
    { resource, ttl: duration(ttlMs), wait: duration(waitMs), owner: `example.js pid ${process.pid}` },
    waitMs + 5000,
  );
  if (!reply.acquired) return { acquired: false, reply };
  const validityMs = millis(reply.lease.validity);
  expect(validityMs > 0 && validityMs <= ttlMs, `validity ${validityMs} ms for a ${ttlMs} ms TTL`);
  return {
    acquired: true,
    reply,
    lease: reply.lease, // lease.value is the secret for Extend/Release: never log it
    token: BigInt(reply.lease.fencing_token),
    validUntil: sentAt + validityMs,
    receivedAt: performance.now(),
  };
}

/** Writes under a lease: refuses once the lease's validity has run out. */
function fencedWrite(storage, lease, key, value) {
  const leftMs = lease.validUntil - performance.now();
  if (leftMs <= 0) {
    throw new LeaseExpiredError(`validity ran out ${(-leftMs).toFixed(0)} ms ago: not writing ${key}`);
  }
  storage.write(lease.token, key, value); // the storage checks the token too
  log(`wrote ${key}=${value} with token ${lease.token} (${leftMs.toFixed(0)} ms of validity left)`);
}

async function release(client, lease) {
  const reply = await unary(client, 'Release', { resource: lease.lease.resource, value: lease.lease.value }, 5000);
  return reply.released;
}

// --- (b) A Hold session -----------------------------------------------------

/** Resolves with the stream's next item, or with 'timeout' after ms. */
async function nextOrTimeout(events, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
  });
  try {
    return await Promise.race([events.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens a session, works under it (one fenced write per ACQUIRED/EXTENDED)
 * until it has seen `extensions` EXTENDED events, then half-closes and
 * expects RELEASED with held_to_end. Returns the session's token.
 */
async function holdSession(client, storage, resource, { ttlMs, waitMs, extensions }) {
  const call = client.Hold(auth()); // no deadline: a session lives as long as it is needed
  const events = call[Symbol.asyncIterator]();
  call.write({ start: { resource, ttl: duration(ttlMs), wait: duration(waitMs), owner: `example.js pid ${process.pid}` } });

  let token = null;
  let validUntil = -Infinity; // own deadline, on the performance.now() clock
  let extended = 0;
  let halfClosed = false;
  try {
    // Before ACQUIRED, the daemon may wait up to `waitMs` for the lock.
    let limit = performance.now() + waitMs + 5000;
    for (;;) {
      const item = await nextOrTimeout(events, limit - performance.now());
      if (item === 'timeout') {
        // With a lease: our own validity ran out before an EXTENDED or LOST
        // arrived (daemon or network stuck). Stop working under the lock.
        throw new Error(token === null ? 'no answer to HoldStart' : 'own validity ran out: stopped working');
      }
      expect(!item.done, 'the session ended without LOST or RELEASED');
      const msg = item.value;
      const receivedAt = performance.now();
      switch (msg.event) {
        case 'HOLD_EVENT_ACQUIRED':
        case 'HOLD_EVENT_EXTENDED': {
          // Count validity from receipt: the daemon already subtracted its
          // rounds and the drift margin.
          validUntil = receivedAt + millis(msg.lease.validity);
          if (msg.event === 'HOLD_EVENT_ACQUIRED') {
            expect(token === null, 'a second ACQUIRED');
            token = BigInt(msg.lease.fencing_token);
            log(`hold: ACQUIRED, token ${token}, validity ${millis(msg.lease.validity).toFixed(0)} ms`);
          } else {
            expect(token !== null && BigInt(msg.lease.fencing_token) === token, 'EXTENDED changed the token');
            extended += 1;
            log(`hold: EXTENDED #${extended}, validity ${millis(msg.lease.validity).toFixed(0)} ms`);
          }
          if (!halfClosed) {
            fencedWrite(storage, { token, validUntil }, `${resource}/progress`, `step ${extended}`);
          }
          if (!halfClosed && extended >= extensions) {
            call.end(); // half-close: the daemon releases at once
            halfClosed = true;
            log('hold: half-closed the stream');
            limit = performance.now() + 5000;
          } else if (!halfClosed) {
            limit = validUntil;
          }
          break;
        }
        case 'HOLD_EVENT_LOST':
          // Stop working under the lock now; the stream ends after this.
          validUntil = -Infinity;
          log(`hold: LOST (${msg.reason}): stopped working`);
          throw new Error(`the session lost its lock: ${msg.reason}`);
        case 'HOLD_EVENT_RELEASED':
          log(`hold: RELEASED (${msg.reason}), held_to_end=${msg.held_to_end}`);
          expect(halfClosed, `RELEASED before the half-close (${msg.reason})`);
          expect(msg.held_to_end === true, 'RELEASED with held_to_end=false');
          expect((await nextOrTimeout(events, 5000)).done === true, 'the stream did not end after RELEASED');
          return token;
        case 'HOLD_EVENT_NOT_ACQUIRED':
          throw new Error(`session not acquired within ${waitMs} ms: ${msg.nodes.join(',')}`);
        default:
          throw new Error(`unknown event ${msg.event}`);
      }
    }
  } finally {
    call.cancel(); // a no-op once the stream has ended; otherwise the daemon releases
  }
}

// --- Readiness ---------------------------------------------------------------

/**
 * Inspect until a majority of the masters is reachable and usable: a freshly
 * started daemon may still be judging some of them, and an Acquire without a
 * usable quorum fails with UNAVAILABLE.
 */
async function waitForQuorum(client, resource, timeoutMs) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const view = await unary(client, 'Inspect', { resource }, 5000);
    const usable = view.nodes.filter((n) => n.reachable && n.state === 'usable').length;
    if (usable >= view.quorum) {
      log(`masters: ${usable} of ${view.nodes.length} usable, quorum ${view.quorum}`);
      return;
    }
    if (performance.now() > until) {
      throw new Error(`only ${usable} usable masters, quorum is ${view.quorum}: ${view.nodes.map((n) => n.state).join(',')}`);
    }
    await sleep(100);
  }
}

// --- The program -------------------------------------------------------------

// --- (d) A Pipeline stream -------------------------------------------------

/**
 * One Pipeline stream shared by any number of concurrent calls: each call
 * gets an id, and one 'data' handler hands each reply to the call with that
 * id. Replies come as calls finish, not in order.
 */
class Pipeline {
  constructor(client) {
    this.nextId = 0n;
    this.waiting = new Map(); // id (a string: longs are strings here) -> { resolve, reject }
    this.ended = null;
    this.stream = client.Pipeline(auth());
    this.stream.on('data', (reply) => {
      const caller = this.waiting.get(reply.id);
      if (caller) {
        this.waiting.delete(reply.id);
        caller.resolve(reply);
      }
    });
    this.finished = new Promise((resolve) => {
      const end = (why) => {
        if (this.ended) return;
        this.ended = why;
        for (const caller of this.waiting.values()) caller.reject(new Error(`the Pipeline stream ended: ${why}`));
        this.waiting.clear();
        resolve(why);
      };
      this.stream.on('error', (err) => end(err.message));
      this.stream.on('end', () => end('ok'));
    });
  }

  /** Sends one call (kind: 'acquire', 'extend' or 'release') and resolves with its reply. */
  call(kind, request) {
    expect(this.ended === null, `the Pipeline stream has ended: ${this.ended}`);
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.stream.write({ id, [kind]: request });
    });
  }

  /** Half-closes; the daemon answers what is in flight and ends the stream. */
  async close() {
    this.stream.end();
    const why = await this.finished;
    expect(why === 'ok', `the Pipeline stream did not end cleanly: ${why}`);
  }
}

async function pipelineDemo(client, resource) {
  const stream = new Pipeline(client);
  const owner = `example.js pid ${process.pid}`;
  // Eight locks taken and released at once, every call on the one stream.
  const tokens = await Promise.all(
    [...Array(8).keys()].map(async (n) => {
      const name = `${resource}/p${n}`;
      const reply = await stream.call('acquire', { resource: name, ttl: duration(5000), owner });
      expect(reply.result === 'acquire' && reply.acquire.acquired, `${name} not granted on the stream: ${JSON.stringify(reply)}`);
      const other = await acquire(client, name, 5000, 0);
      expect(!other.acquired, `${name} was granted twice`);
      const released = await stream.call('release', { resource: name, value: reply.acquire.lease.value });
      expect(released.result === 'release' && released.release.released, `${name}: released=false`);
      return BigInt(reply.acquire.lease.fencing_token);
    }),
  );
  log(`8 concurrent calls on one Pipeline stream took and released 8 locks: tokens ${tokens.join(', ')}`);

  // A bad call is answered with a CallError naming the field; the stream goes on.
  const bad = await stream.call('acquire', { resource: `${resource}/bad`, ttl: duration(3600 * 1000), owner });
  expect(bad.result === 'error', `an out-of-range ttl was not refused: ${JSON.stringify(bad)}`);
  expect(bad.error.code === grpc.status.INVALID_ARGUMENT && bad.error.message.includes('ttl'), `refusal: ${JSON.stringify(bad.error)}`);
  log(`ttl=3600s refused on the stream: code=${bad.error.code} '${bad.error.message}'`);
  const again = await stream.call('acquire', { resource: `${resource}/bad`, ttl: duration(5000), owner });
  expect(again.result === 'acquire' && again.acquire.acquired, 'the stream did not go on after a refused call');
  const freed = await stream.call('release', { resource: `${resource}/bad`, value: again.acquire.lease.value });
  expect(freed.release.released, 'release on the stream: released=false');
  await stream.close();
  log('half-closed: the Pipeline stream ended cleanly');
}

async function main() {
  const address = process.argv[2] || process.env.REDLOCKD_ADDR || '127.0.0.1:7420';
  const client = new Lock(address, credentials());
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 10000, (err) =>
      err ? reject(new Error(`cannot reach redlockd at ${address}: ${err.message}`)) : resolve(),
    ),
  );
  const tls = process.env.REDLOCKD_CERT ? 'mutual TLS' : process.env.REDLOCKD_CA ? 'TLS' : 'plaintext';
  log(`connected to ${address} (${tls}, ${process.env.REDLOCKD_TOKEN ? 'a bearer token' : 'no token'})`);

  const resource = `examples/node/orders-${process.pid}-${Date.now()}`;
  await waitForQuorum(client, resource, 10000);

  const storage = new FencedStorage();

  // (a) Acquire -> fenced write -> Release.
  const first = await acquire(client, resource, 5000, 2000);
  expect(first.acquired, `first Acquire: acquired=false (${first.reply.reason})`);
  log(`acquired ${resource}: token ${first.token}, validity ${millis(first.lease.validity).toFixed(0)} ms`);
  fencedWrite(storage, first, `${resource}/status`, 'paid');

  // (c) A second Acquire while the first lease is held: contention, not an error.
  const second = await acquire(client, resource, 5000, 0);
  expect(!second.acquired, 'a second Acquire got the lock while it was held');
  expect(second.reply.reason === 'FAILURE_REASON_TAKEN', `reason ${second.reply.reason}`);
  log(`second Acquire: acquired=false reason=${second.reply.reason} attempts=${second.reply.attempts} nodes=${second.reply.nodes.join(',')}`);

  const released = await release(client, first);
  expect(released === true, 'Release of the first lease: released=false');
  log('released the first lease: released=true');

  // (c) A later lease carries a larger token. Take it with the minimum TTL
  // (250 ms) to also show the client refusing to write after its validity.
  const later = await acquire(client, resource, 250, 2000);
  expect(later.acquired, `later Acquire: acquired=false (${later.reply.reason})`);
  expect(later.token > first.token, `later token ${later.token} is not larger than ${first.token}`);
  log(`acquired again: token ${later.token} > ${first.token}`);
  fencedWrite(storage, later, `${resource}/status`, 'shipped');

  // A paused client still holding the first token: the storage rejects it.
  try {
    storage.write(first.token, `${resource}/status`, 'paid (stale)');
    expect(false, 'the storage accepted a stale token');
  } catch (e) {
    expect(e instanceof StaleTokenError, `stale write: ${e.message}`);
    log(`storage rejected a stale write: ${e.message}`);
  }

  // Wait past the validity (counted from the send) and past the TTL on the
  // masters: the client must refuse to write, and Release finds it expired.
  await sleep(later.receivedAt + 250 + 100 - performance.now());
  try {
    fencedWrite(storage, later, `${resource}/status`, 'delivered');
    expect(false, 'wrote after the validity ran out');
  } catch (e) {
    expect(e instanceof LeaseExpiredError, `late write: ${e.message}`);
    log(`refused to write: ${e.message}`);
  }
  const lateRelease = await release(client, later);
  expect(lateRelease === false, 'Release after the TTL: released=true');
  log('released the expired lease: released=false (it had expired)');

  // (b) A Hold session on the same resource: TTL 1.5 s (at least 8 x the
  // daemon's node_timeout), renewed by the daemon at about a third of it.
  const held = await holdSession(client, storage, resource, { ttlMs: 1500, waitMs: 2000, extensions: 2 });
  expect(held > later.token, `session token ${held} is not larger than ${later.token}`);
  log(`session token ${held} > ${later.token}`);

  // (d) Many calls on one Pipeline stream.
  await pipelineDemo(client, resource);

  client.close();
  log(`ok: tokens ${first.token} < ${later.token} < ${held}; storage holds ${JSON.stringify(Object.fromEntries(storage.data))}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[example] FAILED: ${err.message}`);
    process.exit(1);
  },
);
