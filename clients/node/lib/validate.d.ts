import type { Duration } from './gen/google/protobuf/duration';
import { LockMode } from './gen/redlockd/v1/lock';
/** Longest resource name, in bytes (as the daemon). */
export declare const MAX_RESOURCE_BYTES = 256;
/** Longest owner label, in bytes (as the daemon). */
export declare const MAX_OWNER_BYTES = 256;
/** Longest reentrancy key, in bytes (as the daemon). */
export declare const MAX_REENTRANCY_KEY_BYTES = 128;
/** The most resources one set takes (acquireMany, releaseMany), as the daemon. */
export declare const MAX_SET = 16;
/** A resource name: 1 to 256 bytes of printable UTF-8. */
export declare function resource(value: unknown): string;
/**
 * A set's resource names: an array of 1 to 16, each a valid resource,
 * counted as given (repeats too, as the daemon counts them).
 */
export declare function resources(value: unknown): string[];
/** An owner label: 0 to 256 bytes of printable UTF-8. */
export declare function owner(value: unknown): string;
/** The wire's lock mode for the `shared` option (unset: exclusive). */
export declare function mode(shared: unknown): LockMode;
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
export declare function kind(shared: unknown, permits?: unknown, reentrancyKey?: unknown): Kind;
/** A duration in milliseconds: a finite number >= 0. */
export declare function millis(field: string, value: unknown): number;
/** Milliseconds as a protobuf Duration. */
export declare function toDuration(ms: number): Duration;
/** A protobuf Duration as milliseconds (0 when unset). */
export declare function fromDuration(d: Duration | undefined): number;
/** The largest value a leader may publish, in bytes (as the daemon). */
export declare const MAX_ELECTION_VALUE_BYTES = 4096;
/** An election's name: 1 to 256 bytes of printable UTF-8, as a resource's. */
export declare function election(value: unknown): string;
/** A candidate's name: 1 to 256 bytes of printable UTF-8. */
export declare function candidate(value: unknown): string;
/** A leader's value: a string (sent as UTF-8) or bytes, at most 4096 bytes. */
export declare function electionValue(value: unknown): Buffer;
/** A term: a bigint from 1 to 2^64 - 1 (what ELECTED or leader() gave). */
export declare function term(value: unknown): bigint;
