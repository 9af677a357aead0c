// The status page in a real browser (docs/operations.md#status-page):
// Debian's headless Chromium, driven by puppeteer-core, against a real
// daemon and five real masters (scripts/with-dev-daemon, started by
// scripts/test-status-page). It asserts what a person would see, without
// reloading the page: the holder's fencing token, a waiter appearing, a
// release seen live (Watch), the leader changing after a resign (Observe),
// and a master shown unusable once it is killed; then runs axe-core on the
// page and fails on any violation of serious or critical impact.
// Screenshots go to $SCREENSHOTS (one per step).
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const daemon = "http://" + process.env.REDLOCKD_ADDR;
const pageUrl = process.env.STATUS_URL;
const shots = process.env.SCREENSHOTS;
const masterPids = process.env.REDLOCKD_DEV_MASTER_PIDS.trim().split(/\s+/).map(Number);
const masterPorts = process.env.REDLOCKD_DEV_MASTER_PORTS.trim().split(/\s+/);
const WAIT = { timeout: 20000, polling: 100 };
mkdirSync(shots, { recursive: true });
const say = (line) => console.log("status page: " + line);

async function call(route, body, signal) {
  const response = await fetch(daemon + route, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const json = await response.json();
  assert.ok(response.ok, route + ": " + JSON.stringify(json));
  return json;
}

// A campaign (NDJSON stream) whose first event is awaited when `first`.
async function campaign(election, candidate) {
  const controller = new AbortController();
  const response = await fetch(daemon + "/v1/elections/" + election + ":campaign", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ candidate, ttl: "10s" }),
    signal: controller.signal,
  });
  assert.equal(response.status, 200, candidate + "'s campaign");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const events = [];
  (async () => {
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const line = JSON.parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
          if (line.result) events.push(line.result);
        }
      }
    } catch {}
  })();
  return { controller, events };
}

async function until(what, check, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
let step = 0;
async function shot(page, name) {
  const file = path.join(shots, String(++step).padStart(2, "0") + "-" + name + ".png");
  await page.screenshot({ path: file, fullPage: true });
  say("screenshot " + file);
}
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim()).catch(() => null);
async function see(page, what, selector, wanted) {
  try {
    await page.waitForFunction(
      (selector, wanted) => {
        const node = document.querySelector(selector);
        return node && node.textContent.includes(wanted);
      },
      WAIT,
      selector,
      wanted,
    );
  } catch (error) {
    await shot(page, "failed");
    throw new Error(what + ": " + selector + " never showed " + JSON.stringify(wanted) + " (it shows " + JSON.stringify(await text(page, selector)) + ")");
  }
  say("sees " + what + ": " + JSON.stringify(await text(page, selector)));
}

async function heardByAll(resource) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const view = await call(resource);
    if ((view.nodes || []).length === 5 && view.nodes.every((n) => n.reachable === true)) return view.holder.fencingToken;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(resource + ": no Inspect heard all five masters in 100 tries");
}

let failed = false;
const pending = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("pageerror", (error) => { failed = true; console.error("page error: " + error.message); });
  await page.goto(pageUrl, { waitUntil: "domcontentloaded" });
  // A reload would lose this: every later check proves the page kept itself live.
  await page.evaluate(() => { window.notReloaded = true; });

  // The masters: five, all usable.
  await see(page, "the masters", "#masters-summary", "5 of 5 masters usable");

  // A lock and its holder's token, as Inspect reports the holder.
  const lease = (await call("/v1/locks/orders/42:acquire", { ttl: "60s", owner: "alice" })).lease;
  // Inspect's token is rebuilt from the counters of the masters that
  // answered in time (docs/design.md#who-holds-it); on a busy host one may
  // miss a read, so take it from a read that heard all five, as the page's
  // own reads do once every master answers.
  const token = await heardByAll("/v1/locks/orders/42");
  await page.type("#locks-prefix", "orders/");
  await page.click("#locks-form button");
  const row = 'tr[data-resource="orders/42"]';
  await see(page, "the holder's token", row + " .token", token);
  await see(page, "the holder", row, "alice");
  await see(page, "no waiter yet", row + " .waiters", "none");
  await shot(page, "lock-held");

  // A waiter in this daemon's queue appears without a reload.
  const waiting = new AbortController();
  pending.push(call("/v1/locks/orders/42:acquire", { ttl: "60s", wait: "60s", owner: "bob" }, waiting.signal).catch(() => null));
  await see(page, "a waiter appearing", row + " .waiters", "bob");
  await shot(page, "waiter");

  // Follow the lock (Watch over SSE); the release shows live, and the
  // lock handed to the waiter.
  await page.click(row + " button");
  await see(page, "the followed lock's token", ".follow-fencing-token", token);
  await call("/v1/locks/orders/42:release", { value: lease.value });
  await see(page, "the release, live", "#follow-log", "RELEASED");
  await see(page, "the new holder, live", ".follow-holder", "bob");
  await shot(page, "released-live");

  // An election: node-a leads, node-b waits here; a resign hands it over.
  const a = await campaign("jobs/leader", "node-a");
  const elected = await until("node-a elected", () => a.events.find((e) => e.event === "CAMPAIGN_EVENT_ELECTED"));
  const b = await campaign("jobs/leader", "node-b");
  await page.type("#elections-prefix", "jobs/");
  await page.click("#elections-form button");
  const erow = 'tr[data-election="jobs/leader"]';
  await see(page, "the leader", erow + " .leader", "node-a");
  await see(page, "the leader's term", erow + " .term", elected.term);
  await see(page, "a candidate waiting here", erow, "node-b");
  await page.click(erow + " button");
  await see(page, "the followed leader", ".follow-leader", "node-a");
  await shot(page, "election");
  await call("/v1/elections/jobs/leader:resign", { term: elected.term });
  await see(page, "the new leader after the resign, live", ".follow-leader", "node-b");
  const term = await text(page, ".follow-term");
  assert.notEqual(term, elected.term, "a new term");
  await see(page, "the new leader in the list", erow + " .leader", "node-b");
  await shot(page, "leader-changed");

  // A master killed: shown unusable, and why.
  process.kill(masterPids[0], "SIGKILL");
  const mrow = await until("the killed master's row", () =>
    page.evaluate((port) => {
      const tr = [...document.querySelectorAll("#masters tbody tr")].find((r) => r.cells[1].textContent.endsWith(":" + port));
      return tr ? 'tr[data-index="' + tr.dataset.index + '"]' : null;
    }, masterPorts[0]));
  await see(page, "the killed master unusable", mrow + " .standing-cell", "unusable");
  await see(page, "why", mrow, "unreachable");
  await see(page, "four usable", "#masters-summary", "4 of 5 masters usable");
  await shot(page, "master-unusable");

  assert.equal(await page.evaluate(() => window.notReloaded), true, "the page was never reloaded");
  assert.equal(failed, false, "no script error on the page");

  // The accessibility lint, with every part of the page shown.
  // Evaluated through the DevTools protocol: the page's own
  // Content-Security-Policy (its own scripts only) stays as served.
  await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
  const results = await page.evaluate(() => window.axe.run(document));
  const byImpact = {};
  for (const v of results.violations) byImpact[v.impact] = (byImpact[v.impact] || 0) + 1;
  say("axe-core " + results.testEngine.version + ": " + results.passes.length + " rules pass, violations by impact " + JSON.stringify(byImpact));
  for (const v of results.violations) say("  " + v.impact + " " + v.id + ": " + v.help + " (" + v.nodes.length + " nodes)");
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious.map((v) => v.id), [], "no serious or critical accessibility violation");

  a.controller.abort();
  b.controller.abort();
  waiting.abort();
  say("ok");
} finally {
  await browser.close();
}
