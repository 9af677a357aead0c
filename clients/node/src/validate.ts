// Request checks made before anything is sent, worded as the daemon words
// them (src/api/request.rs), so a message reads the same from either side.
// Ranges the client cannot know (the daemon's min_ttl, max_ttl, max_wait,
// max_hold) are left to the daemon, which names the field and the range.

import { InvalidArgumentError } from './errors';
import type { Duration } from './gen/google/protobuf/duration';
import { LockMode } from './gen/redlockd/v1/lock';

/** Longest resource name, in bytes (as the daemon). */
export const MAX_RESOURCE_BYTES = 256;
/** Longest owner label, in bytes (as the daemon). */
export const MAX_OWNER_BYTES = 256;
/** Longest reentrancy key, in bytes (as the daemon). */
export const MAX_REENTRANCY_KEY_BYTES = 128;
/** The most resources one set takes (acquireMany, releaseMany), as the daemon. */
export const MAX_SET = 16;
/** The most permits the wire can carry (a uint32); the daemon's lock.max_permits (64 by default) is its own check. */
const MAX_PERMITS_WIRE = 2 ** 32 - 1;

// Rust's char::is_control: the Unicode category Cc.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
// Half a surrogate pair: no UTF-8 for it (gRPC would send U+FFFD instead).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A character as Rust's `{:?}` shows it: '\n', '\0', '\u{7f}'. */
function rustDebug(c: string): string {
  const named: Record<string, string> = { '\0': '\\0', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
  const code = c.codePointAt(0) ?? 0;
  return `'${named[c] ?? `\\u{${code.toString(16)}}`}'`;
}

/** What is wrong with `value` as `least` to `most` bytes of printable UTF-8, in the daemon's words; undefined when nothing is. */
function notPrintable(value: unknown, least: number, most: number): string | undefined {
  if (typeof value !== 'string') return `must be a string, not ${typeof value}`;
  const size = Buffer.byteLength(value, 'utf8');
  if (size < least || size > most) {
    return `is ${size} bytes long; it must be ${least} to ${most} bytes of printable UTF-8`;
  }
  const control = CONTROL.exec(value);
  if (control) return `contains the control character ${rustDebug(control[0])}; only printable UTF-8 is allowed`;
  return undefined;
}

function printable(field: string, value: unknown, least: number, most: number): string {
  const wrong = notPrintable(value, least, most);
  if (wrong !== undefined) throw new InvalidArgumentError(`invalid ${field}: ${wrong}`);
  return value as string;
}

/** A resource name: 1 to 256 bytes of printable UTF-8. */
export function resource(value: unknown): string {
  return printable('resource', value, 1, MAX_RESOURCE_BYTES);
}

/**
 * A set's resource names: an array of 1 to 16, each a valid resource,
 * counted as given (repeats too, as the daemon counts them).
 */
export function resources(value: unknown): string[] {
  if (!Array.isArray(value)) {
    throw new InvalidArgumentError(`invalid resources: must be an array of strings, not ${typeof value}`);
  }
  if (value.length < 1 || value.length > MAX_SET) {
    // The daemon's words (src/api/request.rs).
    throw new InvalidArgumentError(`invalid resources: ${value.length} names; 1 to ${MAX_SET} are allowed`);
  }
  value.forEach((name, i) => {
    const wrong = notPrintable(name, 1, MAX_RESOURCE_BYTES);
    if (wrong !== undefined) throw new InvalidArgumentError(`invalid resources: [${i}] ${wrong}`);
  });
  return [...value];
}

/** An owner label: 0 to 256 bytes of printable UTF-8. */
export function owner(value: unknown): string {
  return printable('owner', value, 0, MAX_OWNER_BYTES);
}

/** The wire's lock mode for the `shared` option (unset: exclusive). */
export function mode(shared: unknown): LockMode {
  if (shared !== undefined && typeof shared !== 'boolean') {
    throw new InvalidArgumentError(`invalid shared: must be a boolean, not ${typeof shared}`);
  }
  return shared ? LockMode.LOCK_MODE_SHARED : LockMode.LOCK_MODE_EXCLUSIVE;
}

/** What a request takes: its mode, number of permits and reentrancy key. */
export interface Kind {
  mode: LockMode;
  permits: number;
  reentrancyKey: string;
}

/**
 * The `shared`, `permits` and `reentrancyKey` options as the wire's fields,
 * checked as the daemon checks them. The key itself is never shown in a
 * message.
 */
export function kind(shared: unknown, permits: unknown = 0, reentrancyKey: unknown = ''): Kind {
  const lockMode = mode(shared);
  if (typeof permits !== 'number' || !Number.isInteger(permits) || permits < 0 || permits > MAX_PERMITS_WIRE) {
    const shown = typeof permits === 'number' ? String(permits) : `a ${typeof permits}`;
    throw new InvalidArgumentError(`invalid permits: ${shown} is not a number of permits (an integer: 0 or 1 a lock, N >= 2 a semaphore)`);
  }
  if (permits >= 2 && lockMode === LockMode.LOCK_MODE_SHARED) {
    // The daemon's words (src/api/request.rs).
    throw new InvalidArgumentError(
      'invalid permits: a shared lock takes no permits: set permits to 0 or 1, or mode to LOCK_MODE_EXCLUSIVE',
    );
  }
  if (typeof reentrancyKey !== 'string') {
    throw new InvalidArgumentError(`invalid reentrancy_key: must be a string, not ${typeof reentrancyKey}`);
  }
  if (LONE_SURROGATE.test(reentrancyKey)) {
    throw new InvalidArgumentError('invalid reentrancy_key: is not valid UTF-8 (it has a lone surrogate)');
  }
  const size = Buffer.byteLength(reentrancyKey, 'utf8');
  if (size > MAX_REENTRANCY_KEY_BYTES) {
    throw new InvalidArgumentError(`invalid reentrancy_key: is ${size} bytes; at most ${MAX_REENTRANCY_KEY_BYTES} are allowed`);
  }
  return { mode: lockMode, permits, reentrancyKey };
}

/** A duration in milliseconds: a finite number >= 0. */
export function millis(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    const shown = typeof value === 'number' ? `${value}ms` : `a ${typeof value}`;
    throw new InvalidArgumentError(
      `invalid ${field}: ${shown} is not a valid non-negative duration (milliseconds, a finite number >= 0)`,
    );
  }
  return value;
}

/** Milliseconds as a protobuf Duration. */
export function toDuration(ms: number): Duration {
  const nanos = BigInt(Math.round(ms * 1e6));
  return { seconds: nanos / 1_000_000_000n, nanos: Number(nanos % 1_000_000_000n) };
}

/** A protobuf Duration as milliseconds (0 when unset). */
export function fromDuration(d: Duration | undefined): number {
  return d ? Number(d.seconds) * 1000 + d.nanos / 1e6 : 0;
}

/** The largest value a leader may publish, in bytes (as the daemon). */
export const MAX_ELECTION_VALUE_BYTES = 4096;
const MAX_TERM = 2n ** 64n - 1n;

/** An election's name: 1 to 256 bytes of printable UTF-8, as a resource's. */
export function election(value: unknown): string {
  return printable('election', value, 1, MAX_RESOURCE_BYTES);
}

/** A candidate's name: 1 to 256 bytes of printable UTF-8. */
export function candidate(value: unknown): string {
  return printable('candidate', value, 1, MAX_OWNER_BYTES);
}

/** A leader's value: a string (sent as UTF-8) or bytes, at most 4096 bytes. */
export function electionValue(value: unknown): Buffer {
  if (typeof value !== 'string' && !(value instanceof Uint8Array)) {
    throw new InvalidArgumentError(`invalid value: must be a string or a Uint8Array, not ${typeof value}`);
  }
  if (typeof value === 'string' && LONE_SURROGATE.test(value)) {
    throw new InvalidArgumentError('invalid value: is not valid UTF-8 (it has a lone surrogate)');
  }
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
  if (bytes.length > MAX_ELECTION_VALUE_BYTES) {
    // The daemon's words (src/api/request.rs).
    throw new InvalidArgumentError(`invalid value: is ${bytes.length} bytes long; at most ${MAX_ELECTION_VALUE_BYTES} are allowed`);
  }
  return bytes;
}

/** A term: a bigint from 1 to 2^64 - 1 (what ELECTED or leader() gave). */
export function term(value: unknown): bigint {
  if (typeof value !== 'bigint') {
    throw new InvalidArgumentError(`invalid term: must be a bigint (exact above 2^53), not ${typeof value}`);
  }
  if (value === 0n) throw new InvalidArgumentError('invalid term: must be set: the term ELECTED or Leader gave');
  if (value < 0n || value > MAX_TERM) throw new InvalidArgumentError(`invalid term: ${value} is outside 1 to 2^64 - 1`);
  return value;
}
