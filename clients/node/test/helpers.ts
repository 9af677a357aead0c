// What the tests share. They run against a real daemon and five real
// masters started by scripts/with-dev-daemon (test.sh does it).

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

if (!process.env.REDLOCKD_ADDR) {
  throw new Error('REDLOCKD_ADDR is not set: run the tests through clients/node/test.sh');
}

/** A fresh resource name, under the prefix the --secure daemon's tenant may lock. */
export const resource = (): string => `examples/node-${randomBytes(6).toString('hex')}`;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const list = (name: string): number[] => (process.env[name] ?? '').split(' ').filter(Boolean).map(Number);
/** The five masters' loopback ports, in the daemon's order. */
export const masterPorts = (): number[] => list('REDLOCKD_DEV_MASTER_PORTS');
/** The five masters' pids, in the daemon's order. */
export const masterPids = (): number[] => list('REDLOCKD_DEV_MASTER_PIDS');

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
