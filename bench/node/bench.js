#!/usr/bin/env node
// node-redlock 5 on the benchmark's masters: one workload of
// benches/compare.rs per run, as a closed loop of `--clients` concurrent
// async loops sharing one Redlock instance (one ioredis client per master),
// the way a Node service would use it.
//
//   node bench.js --urls redis://127.0.0.1:P1,... --workload a|b|c \
//                 --clients 64 --warmup 1 --duration 5 [--ttl-ms 10000]
//
// Workloads: (a)/(b) acquire a distinct name with a single attempt
// (retryCount 0), release at once; (c) every loop wants the same name and
// retries until held (the library's own retry: retryDelay 200 ms, jitter
// 100 ms, retryCount -1 = unbounded), then releases at once.
//
// Prints JSON lines on stdout: {"event":"ready"}, {"event":"start"} when
// the measured window opens (after the warm-up), {"event":"end"} when it
// closes, then {"event":"result", ops, errors, not_acquired, seconds,
// latencies_us: [...]} with every acquire (or wait) latency of the window.
"use strict";

const Redis = require("ioredis");
const Redlock = require("redlock").default;

function parseArgs(argv) {
  const args = { clients: 1, warmup: 1, duration: 5, ttlMs: 10000 };
  for (let i = 2; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${key}`);
    switch (key) {
      case "--urls": args.urls = value.split(","); break;
      case "--workload": args.workload = value; break;
      case "--clients": args.clients = Number(value); break;
      case "--warmup": args.warmup = Number(value); break;
      case "--duration": args.duration = Number(value); break;
      case "--ttl-ms": args.ttlMs = Number(value); break;
      default: throw new Error(`unknown argument ${key}`);
    }
  }
  if (!args.urls || !["a", "b", "c"].includes(args.workload)) {
    throw new Error("usage: bench.js --urls URL,... --workload a|b|c [--clients N] [--warmup S] [--duration S]");
  }
  return args;
}

const say = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const nowNs = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const args = parseArgs(process.argv);
  const redisClients = args.urls.map((url) => new Redis(url, { lazyConnect: true }));
  await Promise.all(redisClients.map((c) => c.connect()));
  const redlock = new Redlock(redisClients);
  // Failed attempts are reported as "error" events; an EventEmitter with no
  // listener would throw them.
  redlock.on("error", () => {});
  const contended = args.workload === "c";
  const settings = contended ? { retryCount: -1 } : { retryCount: 0 };

  const state = { recording: false, stop: false, ops: 0, errors: 0, notAcquired: 0, latencies: [] };
  say({ event: "ready" });

  async function loop(client) {
    let n = 0;
    while (!state.stop) {
      const name = contended ? "bench:node:c" : `bench:node:${args.workload}:${client}:${n++}`;
      const t0 = nowNs();
      let lock;
      try {
        lock = await redlock.acquire([name], args.ttlMs, settings);
      } catch (e) {
        if (e && e.name === "ExecutionError") state.notAcquired += 1;
        else state.errors += 1;
        if (contended || !(e && e.name === "ExecutionError")) await sleep(10);
        continue;
      }
      const took = Number((nowNs() - t0) / 1000n);
      if (state.recording) {
        state.ops += 1;
        state.latencies.push(took);
      }
      try {
        await lock.release();
      } catch (e) {
        state.errors += 1;
      }
    }
  }

  const loops = [];
  for (let i = 0; i < args.clients; i++) loops.push(loop(i));
  await sleep(args.warmup * 1000);
  say({ event: "start" });
  state.recording = true;
  const started = nowNs();
  await sleep(args.duration * 1000);
  state.recording = false;
  const seconds = Number(nowNs() - started) / 1e9;
  say({ event: "end" });
  state.stop = true;
  await Promise.all(loops);
  say({
    event: "result",
    ops: state.ops,
    errors: state.errors,
    not_acquired: state.notAcquired,
    seconds,
    latencies_us: state.latencies,
  });
  await Promise.all(redisClients.map((c) => c.quit()));
}

main().catch((e) => {
  process.stderr.write(`bench.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
