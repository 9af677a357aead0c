// Plays the conformance scenarios (clients/conformance/README.md): reads
// the files, expands their values, runs each step through the client's
// calls (calls.ts), checks what it expects and prints one line per scenario.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Calls, type Fields } from './calls';

/** The scenario files, from test/.build/conformance (where tsc puts this). */
export const SCENARIOS = resolvePath(__dirname, '../../../../conformance/scenarios');
/** Buckets every verified master has a marker for (docs/design.md#keys). */
const BUCKETS = 16384;
/** The longest any one step may take before the scenario fails. */
const STEP_LIMIT_MS = 60_000;

export type Json = null | boolean | number | string | bigint | Json[] | { [key: string]: Json };
export interface Step {
  call?: string;
  action?: string;
  args?: { [key: string]: Json };
  as?: string;
  expect?: { [key: string]: Json };
  expect_error?: { code: string; field?: string; message_contains?: Json };
  [key: string]: Json | undefined;
}
export interface Scenario {
  id: string;
  about: string;
  needs?: string[];
  steps: Step[];
}

/** A step did not meet its expectation: the scenario fails. */
export class Failed extends Error {}

const COMPARISONS: Record<string, (a: bigint, b: bigint) => boolean> = {
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  ne: (a, b) => a !== b,
};

/** Every scenario of every file, in file order; ids are unique. */
export function load(directory = SCENARIOS): Scenario[] {
  const files = readdirSync(directory).filter((name) => name.endsWith('.json')).sort();
  const scenarios = files.flatMap((name) => (JSON.parse(readFileSync(join(directory, name), 'utf8')) as { scenarios: Scenario[] }).scenarios);
  const ids = scenarios.map((s) => s.id);
  const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (repeated.length) throw new Error(`conformance: scenario ids repeated: ${repeated.join(', ')}`);
  return scenarios;
}

/** `{run}` replaced in every string; `repeat` and `numbered` made. */
export function expand(value: Json, run: string): Json {
  if (typeof value === 'string') return value.replaceAll('{run}', run);
  if (Array.isArray(value)) return value.map((v) => expand(v, run));
  if (value !== null && typeof value === 'object' && typeof value !== 'bigint') {
    const keys = Object.keys(value).sort().join(',');
    if (keys === 'repeat,times') return String(value.repeat).repeat(Number(value.times));
    if (keys === 'count,numbered') {
      return Array.from({ length: Number(value.count) }, (_, i) => `${expand(value.numbered, run)}${i}`);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, run)]));
  }
  return value;
}

/** `"$name.field"` references replaced by what was bound. */
export function resolve(value: Json, bound: Map<string, Fields>): Json {
  if (typeof value === 'string' && value.startsWith('$')) {
    const [name, ...path] = value.slice(1).split('.');
    if (!bound.has(name)) throw new Failed(`${value}: nothing was bound as ${name}`);
    let found: Json = bound.get(name) as Json;
    for (const part of path) {
      if (found === null || typeof found !== 'object' || Array.isArray(found) || !(part in found)) {
        throw new Failed(`${value}: ${name} has no ${part}`);
      }
      found = (found as { [key: string]: Json })[part];
    }
    return found;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, bound));
  if (value !== null && typeof value === 'object' && typeof value !== 'bigint') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, bound)]));
  }
  return value;
}

/** A token, term or count, exact: a bigint, an integer number or a decimal string (never through a double). */
function exact(value: Json, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return BigInt(value);
  throw new Failed(`${what}: ${show(value)} is not an exact integer`);
}

export const show = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value);

/** `actual` meets `expected` (resolved), or Failed saying why. */
export function check(actual: Json, expected: Json, what: string): void {
  const ops = expected !== null && typeof expected === 'object' && !Array.isArray(expected) && typeof expected !== 'bigint' ? Object.keys(expected) : [];
  if (ops.length > 0 && ops.every((op) => op in COMPARISONS)) {
    for (const op of ops) {
      const bound = (expected as { [key: string]: Json })[op];
      if (!COMPARISONS[op](exact(actual, what), exact(bound, what))) throw new Failed(`${what} was ${show(actual)}, expected ${op} ${show(bound)}`);
    }
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      throw new Failed(`${what} was ${show(actual)}, expected ${expected.length} items ${show(expected)}`);
    }
    expected.forEach((e, i) => check(actual[i], e, `${what}[${i}]`));
  } else if (typeof expected === 'boolean' || typeof actual === 'boolean') {
    if (actual !== expected) throw new Failed(`${what} was ${show(actual)}, expected ${show(expected)}`);
  } else if (typeof actual === 'bigint' || typeof actual === 'number') {
    if (exact(actual, what) !== exact(expected, what)) throw new Failed(`${what} was ${show(actual)}, expected ${show(expected)}`);
  } else if (actual !== expected) {
    throw new Failed(`${what} was ${show(actual)}, expected ${show(expected)}`);
  }
}

export function meets(fields: Fields, expect: { [key: string]: Json }, what: string): void {
  for (const [key, expected] of Object.entries(expect)) {
    if (!(key in fields)) throw new Failed(`${what} has no ${key} (${show(fields)})`);
    check(fields[key] as Json, expected, `${what}: ${key}`);
  }
}

const redis = (port: string, ...args: string[]): string => execFileSync('redis-cli', ['-p', port, ...args], { encoding: 'utf8' }).trim();

/** Raises every verified bucket's fence counter on every master so that every later token is above `value`; the counter set. */
export async function seedCountersAbove(value: bigint): Promise<bigint> {
  const ports = (process.env.REDLOCKD_DEV_MASTER_PORTS ?? '').split(' ').filter(Boolean);
  const highestScript =
    "local h = 0 for _, k in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do h = math.max(h, tonumber(redis.call('GET', k))) end return h";
  const highest = ports.map((port) => BigInt(redis(port, 'EVAL', highestScript, '0'))).reduce((a, b) => (a > b ? a : b), 0n);
  // A counter already raised near 2^53 (another suite's test of large
  // tokens) is kept: past 2^53 every master would refuse to grant.
  const floor = value / 16n + 1_000_003n;
  const counter = highest > floor ? highest : floor;
  if (counter >= 2n ** 53n) throw new Failed(`seed_counters_above: the counter ${counter} is past 2^53, where the masters' Lua stops`);
  const setScript =
    "local m = redis.call('KEYS', 'redlockd:{*}:verified') for _, k in ipairs(m) do redis.call('SET', string.sub(k, 1, -1 - #'verified') .. 'fence', ARGV[1]) end return #m";
  for (const port of ports) {
    const deadline = performance.now() + 10_000;
    while (Number(redis(port, 'EVAL', setScript, '0', String(counter))) < BUCKETS) {
      if (performance.now() > deadline) throw new Failed(`seed_counters_above: the master on port ${port} has not verified every bucket`);
      await sleep(100);
    }
  }
  return counter;
}

/** `promise`, or Failed after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Failed(`${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Plays scenarios through `calls`, one at a time. */
export class Player {
  constructor(
    private readonly calls: Calls,
    private readonly label: string,
  ) {}

  /** `PASS id`, `SKIP id: why` or `FAIL id: why`. */
  async play(scenario: Scenario): Promise<string> {
    const run = `conformance/ts-${this.label}-${randomBytes(5).toString('hex')}`;
    const bound = new Map<string, Fields>();
    const handles = new Map<string, unknown>();
    let stepNo = 0;
    try {
      for (const raw of scenario.steps) {
        stepNo += 1;
        const step = resolve(expand(raw as Json, run), bound) as Step;
        const what = `step ${stepNo} (${step.call ?? step.action})`;
        await within(this.step(scenario, step, what, bound, handles), STEP_LIMIT_MS, what);
      }
      return `PASS ${scenario.id}`;
    } catch (error) {
      if (error instanceof Failed) return `FAIL ${scenario.id}: ${error.message}`;
      return `FAIL ${scenario.id}: step ${stepNo}: ${(error as Error)?.name}: ${(error as Error)?.message ?? show(error)}`;
    } finally {
      await this.calls.cleanUp([...handles.values()]);
    }
  }

  private async step(scenario: Scenario, step: Step, what: string, bound: Map<string, Fields>, handles: Map<string, unknown>): Promise<void> {
    if (step.action !== undefined) return this.action(scenario, step, what, bound, handles);
    const verb = step.call as string;
    const args: { [key: string]: unknown } = { ...(step.args ?? {}) };
    for (const key of ['lease', 'hold', 'leadership', 'stream', 'set']) {
      if (key in args) args[key] = this.handle(handles, args[key] as string, what);
    }
    if ('members' in args) {
      args.set = (args.members as number[]).map((i) => (args.set as unknown[])[i]);
      delete args.members;
    }
    if (verb === 'next') return this.next(args, step.expect ?? {}, what);
    let fields: Fields;
    let handle: unknown;
    try {
      [fields, handle] = await this.calls.call(verb, args);
    } catch (error) {
      if (error instanceof Failed) throw error;
      if (!step.expect_error) throw new Failed(`${what} threw ${(error as Error)?.name}: ${(error as Error)?.message}`);
      this.errorMeets(error as Error, step.expect_error, what);
      return;
    }
    if (step.expect_error) throw new Failed(`${what} gave ${show(fields)}, expected the error ${show(step.expect_error)}`);
    meets(fields, step.expect ?? {}, what);
    if (step.as !== undefined) {
      bound.set(step.as, fields);
      handles.set(step.as, handle);
    }
  }

  private errorMeets(error: Error, expected: NonNullable<Step['expect_error']>, what: string): void {
    const code = this.calls.code(error);
    if (code !== expected.code) throw new Failed(`${what} threw ${code} (${error.name}: ${error.message}), expected ${expected.code}`);
    if (expected.field !== undefined && !error.message.includes(`invalid ${expected.field}`)) {
      throw new Failed(`${what}: the message does not name ${expected.field}: ${JSON.stringify(error.message)}`);
    }
    if (expected.message_contains !== undefined && !error.message.includes(String(expected.message_contains))) {
      throw new Failed(`${what}: the message does not say ${String(expected.message_contains)}: ${JSON.stringify(error.message)}`);
    }
  }

  /** Reads the stream until a state meets `expect`, within the limit. */
  private async next(args: { [key: string]: unknown }, expect: { [key: string]: Json }, what: string): Promise<void> {
    const withinMs = Number(args.within_ms ?? 10_000);
    const deadline = performance.now() + withinMs;
    const seen: Fields[] = [];
    for (;;) {
      const fields = await this.calls.next(args.stream, Math.max(deadline - performance.now(), 0));
      if (fields === null) throw new Failed(`${what}: nothing met ${show(expect)} within ${withinMs} ms; seen ${show(seen)}`);
      try {
        meets(fields, expect, what);
        return;
      } catch (error) {
        if (!(error instanceof Failed)) throw error;
        seen.push(fields);
      }
    }
  }

  private async action(scenario: Scenario, step: Step, what: string, bound: Map<string, Fields>, handles: Map<string, unknown>): Promise<void> {
    switch (step.action) {
      case 'sleep':
        await sleep(Number(step.ms));
        return;
      case 'kill_masters': {
        if (!scenario.needs?.includes('own-daemon')) throw new Failed(`${what}: kills masters, but the scenario does not need its own daemon`);
        const pids = (process.env.REDLOCKD_DEV_MASTER_PIDS ?? '').split(' ').filter(Boolean);
        for (const pid of pids.slice(0, Number(step.count))) process.kill(Number(pid), 'SIGKILL');
        return;
      }
      case 'expect_lost': {
        const name = String(step.hold ?? step.leadership);
        if (!(await this.calls.lost(this.handle(handles, name, what), Number(step.within_ms)))) {
          throw new Failed(`${what}: ${name} was not told lost within ${step.within_ms} ms`);
        }
        return;
      }
      case 'seed_counters_above':
        bound.set(String(step.as), { counter: String(await seedCountersAbove(exact(step.value as Json, what))) });
        return;
      default:
        throw new Failed(`${what}: no such action ${step.action}`);
    }
  }

  /** A bound handle: `a`, or `s.1` (a set's member). */
  private handle(handles: Map<string, unknown>, name: string, what: string): unknown {
    const [base, index] = name.split('.');
    const found = handles.get(base);
    if (found === undefined || found === null) throw new Failed(`${what}: no handle ${base} was bound`);
    return index === undefined ? found : (found as unknown[])[Number(index)];
  }
}
