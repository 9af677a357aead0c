'use strict';
// The Node.js client of redlockd: locks with fencing tokens over gRPC.
// Durations are milliseconds (as node-redlock); fencing tokens are bigints;
// validUntil is a performance.now() deadline counted from the send.

const path = require('node:path');
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const errors = require('./errors');

const { InvalidArgumentError, UnavailableError, NotAcquiredError, LockLostError, RedlockdError, fromStatus } = errors;

// `await using` on Node versions without the symbol (TypeScript's
// downlevel emit looks it up by this name).
if (typeof Symbol.asyncDispose !== 'symbol') {
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('Symbol.asyncDispose') });
}

const DEFAULT_ADDRESS = '127.0.0.1:7420';
const MAX_RESOURCE_BYTES = 256;
const MAX_OWNER_BYTES = 256;
// A wait cut short by UNAVAILABLE is retried after a pause in this range (ms).
const RETRY_PAUSE_MS = [50, 250];

const definition = protoLoader.loadSync(path.join(__dirname, '..', 'proto', 'redlockd', 'v1', 'lock.proto'), {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const { Lock } = grpc.loadPackageDefinition(definition).redlockd.v1;

function printable(field, value, least, most) {
  if (typeof value !== 'string') throw new InvalidArgumentError(`invalid ${field}: must be a string`);
  const size = Buffer.byteLength(value, 'utf8');
  if (size < least || size > most) {
    throw new InvalidArgumentError(
      `invalid ${field}: is ${size} bytes long; it must be ${least} to ${most} bytes of printable UTF-8`,
      grpc.status.INVALID_ARGUMENT,
    );
  }
  // eslint-disable-next-line no-control-regex
  const control = value.match(/[\u0000-\u001f\u007f-\u009f]/);
  if (control) {
    throw new InvalidArgumentError(
      `invalid ${field}: contains the control character ${JSON.stringify(control[0])}; only printable UTF-8 is allowed`,
      grpc.status.INVALID_ARGUMENT,
    );
  }
}

function millis(field, value) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`invalid ${field}: must be milliseconds, a finite number >= 0 (got ${value})`);
  }
  return value;
}

function wire(ms) {
  const whole = Math.floor(ms / 1000);
  return { seconds: String(whole), nanos: Math.round((ms - whole * 1000) * 1e6) };
}

function fromWire(d) {
  return d ? Number(d.seconds) * 1000 + d.nanos / 1e6 : 0;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How long to pause before trying again after UNAVAILABLE, or null. */
function retryPause(deadline) {
  const pause = RETRY_PAUSE_MS[0] + Math.random() * (RETRY_PAUSE_MS[1] - RETRY_PAUSE_MS[0]);
  return performance.now() + pause < deadline ? pause : null;
}

function readFile(name) {
  const file = process.env[name];
  return file ? fs.readFileSync(file) : undefined;
}

/** A connection to one redlockd. */
class Client {
  /**
   * @param {{address?: string, token?: string, tls?: {ca?: Buffer|string, cert?: Buffer|string, key?: Buffer|string}}} [options]
   *   unset ones come from REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA, REDLOCKD_CERT, REDLOCKD_KEY.
   */
  constructor(options = {}) {
    let address = options.address || process.env.REDLOCKD_ADDR || DEFAULT_ADDRESS;
    const token = options.token !== undefined ? options.token : process.env.REDLOCKD_TOKEN || undefined;
    let tls = options.tls;
    if (!tls && (process.env.REDLOCKD_CA || process.env.REDLOCKD_CERT || process.env.REDLOCKD_KEY)) {
      if (!process.env.REDLOCKD_CERT !== !process.env.REDLOCKD_KEY) {
        throw new InvalidArgumentError('REDLOCKD_CERT and REDLOCKD_KEY must be set together');
      }
      tls = { ca: readFile('REDLOCKD_CA'), cert: readFile('REDLOCKD_CERT'), key: readFile('REDLOCKD_KEY') };
    }
    if (address.startsWith('https://')) {
      tls = tls || {};
      address = address.slice('https://'.length);
    } else if (address.startsWith('http://')) {
      address = address.slice('http://'.length);
    }
    const buffer = (v) => (v === undefined || Buffer.isBuffer(v) ? v : Buffer.from(v));
    const credentials = tls
      ? grpc.credentials.createSsl(buffer(tls.ca) || null, buffer(tls.key) || null, buffer(tls.cert) || null)
      : grpc.credentials.createInsecure();
    this._stub = new Lock(address, credentials);
    this._metadata = new grpc.Metadata();
    if (token) this._metadata.set('authorization', `Bearer ${token}`);
  }

  close() {
    this._stub.close();
  }

  _unary(method, request) {
    return new Promise((resolve, reject) => {
      this._stub[method](request, this._metadata, (err, reply) => (err ? reject(fromStatus(err)) : resolve(reply)));
    });
  }

  /**
   * Takes the lock on `resource`, trying for up to `wait` ms; null when
   * someone else kept it all along (contention is a value).
   */
  async acquire(resource, { ttl = 10000, wait = 0, owner = '' } = {}) {
    printable('resource', resource, 1, MAX_RESOURCE_BYTES);
    printable('owner', owner, 0, MAX_OWNER_BYTES);
    if (ttl !== null) millis('ttl', ttl);
    const deadline = performance.now() + millis('wait', wait);
    for (;;) {
      const sent = performance.now();
      const left = Math.max(0, deadline - sent);
      const request = { resource, owner, ttl: ttl === null ? null : wire(ttl), wait: left > 0 ? wire(left) : null };
      let reply;
      try {
        reply = await this._unary('Acquire', request);
      } catch (err) {
        const pause = err instanceof UnavailableError ? retryPause(deadline) : null;
        if (pause === null) throw err;
        await sleep(pause);
        continue;
      }
      if (!reply.acquired) return null;
      return new Lease(this, reply.lease, sent);
    }
  }

  /**
   * Opens a Hold session: resolves once the lock is held (NotAcquiredError
   * when the wait runs out); the daemon extends it while the session lives.
   * `lock.signal` is aborted with a LockLostError the moment it is lost.
   */
  async hold(resource, { ttl = 10000, wait = 5000, owner = '', maxHold, signal } = {}) {
    printable('resource', resource, 1, MAX_RESOURCE_BYTES);
    printable('owner', owner, 0, MAX_OWNER_BYTES);
    if (ttl !== null) millis('ttl', ttl);
    if (maxHold !== undefined) millis('maxHold', maxHold);
    const deadline = performance.now() + millis('wait', wait);
    for (;;) {
      try {
        return await HeldLock._open(this, { resource, ttl, owner, maxHold }, Math.max(0, deadline - performance.now()), signal);
      } catch (err) {
        const pause = err instanceof UnavailableError ? retryPause(deadline) : null;
        if (pause === null) throw err;
        await sleep(pause);
      }
    }
  }

  /**
   * node-redlock's `using`: runs `routine(signal, lock)` while a Hold
   * session holds the lock, and releases it afterwards. If the lock was lost
   * meanwhile, `signal` was aborted and this rejects with LockLostError,
   * even when the routine succeeded.
   */
  async using(resource, options, routine) {
    const lock = await this.hold(resource, options);
    let result;
    try {
      result = await routine(lock.signal, lock);
    } catch (err) {
      await lock.release().catch(() => {});
      throw err;
    }
    await lock.release();
    return result;
  }

  /** What the masters hold for `resource` (never lock values). */
  async inspect(resource) {
    printable('resource', resource, 1, MAX_RESOURCE_BYTES);
    return this._unary('Inspect', { resource });
  }
}

/** A lock taken with acquire(): extend it, release it. */
class Lease {
  constructor(client, lease, sent) {
    Object.defineProperty(this, '_client', { value: client });
    Object.defineProperty(this, '_value', { value: lease.value, writable: true });
    /** The locked resource. */
    this.resource = lease.resource;
    /** Strictly increases per resource; a bigint, exact at any size. */
    this.fencingToken = BigInt(lease.fencingToken);
    /** A performance.now() deadline (ms), counted from when the request was sent. */
    this.validUntil = sent + fromWire(lease.validity);
  }

  /** Resets the lock's TTL (ms; null: the daemon's default). false: lost. */
  async extend(ttl = null) {
    if (this._value === null) return false;
    const sent = performance.now();
    const reply = await this._client._unary('Extend', {
      resource: this.resource,
      value: this._value,
      ttl: ttl === null ? null : wire(millis('ttl', ttl)),
    });
    if (reply.extended) this.validUntil = sent + fromWire(reply.validity);
    return reply.extended;
  }

  /** Gives the lock back; true when it was still held to the end. */
  async release() {
    if (this._value === null) return false;
    const value = this._value;
    this._value = null;
    const reply = await this._client._unary('Release', { resource: this.resource, value });
    return reply.released;
  }

  async [Symbol.asyncDispose]() {
    await this.release();
  }

  toJSON() {
    return { resource: this.resource, fencingToken: this.fencingToken.toString(), validUntil: this.validUntil };
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return `Lease { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n }`;
  }
}

/** The lock of a Hold session. */
class HeldLock {
  static _open(client, { resource, ttl, owner, maxHold }, wait, signal) {
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) {
        reject(signal.reason);
        return;
      }
      const call = client._stub.Hold(client._metadata);
      let lock = null;
      const onAbort = () => {
        if (lock) {
          lock.release().catch(() => {});
        } else {
          call.end();
          call.cancel();
          reject(signal.reason);
        }
      };
      if (signal) signal.addEventListener('abort', onAbort, { once: true });
      call.on('data', (event) => {
        const now = performance.now();
        if (!lock) {
          if (event.event === 'HOLD_EVENT_ACQUIRED') {
            lock = new HeldLock(call, event.lease, now);
            resolve(lock);
          } else {
            call.end();
            reject(
              event.event === 'HOLD_EVENT_NOT_ACQUIRED'
                ? new NotAcquiredError(event.reason)
                : new RedlockdError(`the session ended before the lock was held: ${event.reason}`),
            );
          }
          return;
        }
        lock._event(event, now);
      });
      call.on('error', (err) => {
        if (!lock) reject(fromStatus(err));
        else lock._ended(`the session failed: ${err.details || err.message}`);
      });
      call.on('end', () => {
        if (lock) lock._ended('the daemon ended the session');
        else reject(new RedlockdError('the daemon ended the session before answering'));
        if (signal) signal.removeEventListener('abort', onAbort);
      });
      const start = { resource, owner };
      if (ttl !== null) start.ttl = wire(ttl);
      if (wait > 0) start.wait = wire(wait);
      if (maxHold !== undefined) start.maxHold = wire(maxHold);
      call.write({ start });
    });
  }

  constructor(call, lease, received) {
    Object.defineProperty(this, '_call', { value: call });
    this._controller = new AbortController();
    this._released = null;
    this._closed = false;
    this._done = new Promise((resolve) => {
      this._settle = resolve;
    });
    /** The locked resource. */
    this.resource = lease.resource;
    /** The session's fencing token (it never changes within a session): a bigint. */
    this.fencingToken = BigInt(lease.fencingToken);
    /** A performance.now() deadline (ms); moves on with every extension. */
    this.validUntil = received + fromWire(lease.validity);
    /** Aborted with a LockLostError the moment the lock is lost. */
    this.signal = this._controller.signal;
  }

  _event(event, now) {
    if (event.event === 'HOLD_EVENT_EXTENDED') {
      this.validUntil = now + fromWire(event.lease && event.lease.validity);
    } else if (event.event === 'HOLD_EVENT_LOST') {
      this._lose(event.reason);
    } else if (event.event === 'HOLD_EVENT_RELEASED') {
      this._released = event.heldToEnd;
      this._halfClose();
      this._settle();
    }
  }

  _lose(reason) {
    if (!this.signal.aborted) this._controller.abort(new LockLostError(reason));
    // Our half of the stream too: an open request stream keeps the channel
    // (and the process) alive.
    this._halfClose();
    this._settle();
  }

  _halfClose() {
    if (this._closed) return;
    this._closed = true;
    this._call.end();
  }

  _ended(reason) {
    if (this._released === null) this._lose(reason);
    this._settle();
  }

  /** Whether the lock was lost. */
  get lost() {
    return this.signal.aborted;
  }

  /**
   * Gives the lock back and waits for the daemon's word: true when it was
   * held to the end. Rejects with LockLostError when it was lost first.
   */
  async release() {
    if (this._released === null && !this.signal.aborted && !this._closed) {
      this._call.write({ release: {} });
      this._halfClose();
    }
    const timeout = new Promise((resolve) => setTimeout(resolve, 10000, 'timeout').unref());
    const outcome = await Promise.race([this._done, timeout]);
    if (this.signal.aborted) throw this.signal.reason;
    if (outcome === 'timeout') throw new RedlockdError('the daemon did not confirm the release within 10 s');
    return this._released;
  }

  async [Symbol.asyncDispose]() {
    await this.release();
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return `HeldLock { resource: ${JSON.stringify(this.resource)}, fencingToken: ${this.fencingToken}n, lost: ${this.lost} }`;
  }
}

module.exports = { Client, Lease, HeldLock, ...errors };
delete module.exports.fromStatus;
