// What the tests share. They run against a real daemon and five real
// masters started by scripts/with-dev-daemon (test.sh does it).

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

if (!process.env.REDLOCKD_ADDR) {
  throw new Error('REDLOCKD_ADDR is not set: run the tests through clients/node/test.sh');
}

/** A fresh resource name, under the prefix the --secure daemon's tenant may lock. */
export const resource = (): string => `examples/node-${randomBytes(6).toString('hex')}`;
/** A fresh election name (a tenant's prefixes apply to election names too). */
export const election = (): string => `examples/node-election-${randomBytes(6).toString('hex')}`;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const list = (name: string): number[] => (process.env[name] ?? '').split(' ').filter(Boolean).map(Number);
/** The five masters' loopback ports, in the daemon's order. */
export const masterPorts = (): number[] => list('REDLOCKD_DEV_MASTER_PORTS');
/** The five masters' pids, in the daemon's order. */
export const masterPids = (): number[] => list('REDLOCKD_DEV_MASTER_PIDS');

/** The daemon's pid (to freeze it with SIGSTOP). */
export const daemonPid = (): number => {
  const pid = Number(process.env.REDLOCKD_DEV_DAEMON_PID);
  if (!pid) throw new Error('REDLOCKD_DEV_DAEMON_PID is not set: run the tests through clients/node/test.sh');
  return pid;
};

/** Runs a redis-cli command against one master. */
export const redis = (port: number, ...args: string[]): string =>
  execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim();

/** `promise`, or a rejection naming `what` after `ms` (the timer does not outlive it). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(reject, ms, new Error(`${what}: not within ${ms} ms`));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// Every key of a lock carries its bucket's hash tag (docs/design.md#keys): a
// lock is `redlockd:{<tag>}:lock:<resource>`, and each bucket has a fence
// counter `redlockd:{<tag>}:fence` and a marker `redlockd:{<tag>}:verified` on
// every master the daemon verified. The tests find keys with KEYS in a Lua
// script rather than compute the tag.

/** The number of buckets: every verified master has a marker for each. */
export const BUCKETS = 16384;

/** `text` as a KEYS pattern that matches only itself. */
const globEscaped = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** The value of `name`'s lock key on the master at `port` ('' when it has none). */
export const lockValue = (port: number, name: string): string =>
  redis(
    port,
    'EVAL',
    `local keys = redis.call('KEYS', ARGV[1])
     if #keys > 1 then return redis.error_reply('more than one key matches ' .. ARGV[1]) end
     return keys[1] and redis.call('GET', keys[1])`,
    '0',
    `redlockd:{*}:lock:${globEscaped(name)}`,
  );

/** The highest fence counter of any bucket on the master at `port`. */
export const highestFence = (port: number): bigint =>
  BigInt(
    redis(
      port,
      'EVAL',
      `local highest = 0
       for _, key in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do
         highest = math.max(highest, tonumber(redis.call('GET', key)))
       end
       return highest`,
      '0',
    ),
  );

/**
 * Sets the fence counter of every bucket the master at `port` verified (its
 * marker: a bucket's counter is written by its first lock, so a fresh bucket
 * has none) to `counter`; the number of buckets. Right after the daemon
 * started it may still be verifying the master: waits up to 10 s for every
 * bucket's marker.
 */
export async function setEveryFence(port: number, counter: bigint): Promise<number> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const buckets = Number(
      redis(
        port,
        'EVAL',
        `local markers = redis.call('KEYS', 'redlockd:{*}:verified')
         for _, marker in ipairs(markers) do
           redis.call('SET', string.sub(marker, 1, -1 - #'verified') .. 'fence', ARGV[1])
         end
         return #markers`,
        '0',
        String(counter),
      ),
    );
    if (buckets >= BUCKETS || performance.now() > deadline) return buckets;
    await sleep(100);
  }
}
