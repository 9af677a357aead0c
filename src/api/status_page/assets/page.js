// The status page's script (docs/operations.md#status-page): reads the
// JSON under /status/api/ every two seconds, and follows one lock or
// election over Server-Sent Events (Lock/Watch, Election/Observe) read with
// fetch, so a bearer token can go in a header. Writes nothing; every value
// from the daemon goes into the page as text, never as markup.
"use strict";

const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem("redlockd-token") || "", locks: "", elections: "", following: null };

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (state.token) h.Authorization = "Bearer " + state.token;
  return h;
}

// GET /status/api/<path> as JSON; a refusal shows the token form.
async function api(path) {
  const response = await fetch("/status/api/" + path, { headers: headers(), cache: "no-store" });
  if (response.status === 401 || response.status === 403) {
    const body = await response.json().catch(() => ({}));
    askForToken(body.message || response.statusText);
    throw new Error("refused");
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(body.message || response.statusText);
  }
  return response.json();
}

function askForToken(message) {
  $("token-form").hidden = false;
  $("token-error").textContent = message;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    if (cell instanceof Node) td.appendChild(cell);
    else td.textContent = cell === undefined || cell === null ? "" : String(cell);
    tr.appendChild(td);
  }
  return tr;
}

function when(iso) {
  if (!iso) return "";
  const at = new Date(iso);
  const ago = Math.max(0, Math.round((Date.now() - at.getTime()) / 1000));
  return at.toLocaleTimeString() + " (" + ago + " s ago)";
}

function renderMasters(view) {
  const body = $("masters").tBodies[0];
  body.replaceChildren();
  for (const m of view.masters) {
    const standing = el("span", m.standing, "standing standing-" + m.standing);
    let why = m.why;
    if (m.rejoinInSeconds) why += " (rejoins in " + Math.ceil(m.rejoinInSeconds) + " s)";
    if (m.bucketsOut) why += (why ? "; " : "") + m.bucketsOut + " buckets held out";
    const primaries = m.primaries.map((p) => p.address + " (" + p.buckets + " buckets" + (p.bucketsOut ? ", " + p.bucketsOut + " out" : "") + ")").join(", ");
    const tr = row([m.index, m.address, standing, why, primaries || "standalone"]);
    tr.dataset.index = m.index;
    tr.cells[2].className = "standing-cell";
    body.appendChild(tr);
  }
  $("masters-summary").textContent = view.usable + " of " + view.masters.length + " masters usable; a quorum is " + view.quorum + ".";
}

function renderPlot(id, label, counts, step) {
  const figure = $(id);
  const svg = figure.querySelector("svg");
  const max = Math.max(1, ...counts);
  // A bar per step, the step under way on the right; the axis spans the ring.
  const width = 240 / 61;
  const bars = counts.map((c, i) => {
    const bar = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    const height = c === 0 ? 0 : Math.max(1, (c / max) * 56);
    bar.setAttribute("x", (240 - (counts.length - i) * width).toFixed(2));
    bar.setAttribute("y", (60 - height).toFixed(2));
    bar.setAttribute("width", Math.max(1, width - 0.5).toFixed(2));
    bar.setAttribute("height", height.toFixed(2));
    return bar;
  });
  svg.replaceChildren(...bars);
  const total = counts.reduce((a, b) => a + b, 0);
  const last = counts.length ? counts[counts.length - 1] : 0;
  const span = counts.length * step;
  const spanText = span < 120 ? span + " s" : Math.round(span / 60) + " min";
  const text = label + ": " + last + " in the current " + step + " s, " + total + " in the last " + spanText + ", at most " + max + " per " + step + " s";
  svg.setAttribute("aria-label", text);
  figure.querySelector(".plot-text").textContent = text;
}

function openButton(kind, name) {
  const button = el("button", name, "link");
  button.type = "button";
  button.setAttribute("aria-label", "Follow " + kind + " " + name);
  button.addEventListener("click", () => follow(kind, name));
  return button;
}

function renderLocks(view) {
  const body = $("locks").tBodies[0];
  body.replaceChildren();
  for (const lock of view.locks) {
    const h = lock.holder || {};
    const holder = (h.owner || "(no owner)") + (h.tenant ? " · tenant " + h.tenant : "") + " · " + (h.daemon || "");
    const tr = row([openButton("lock", lock.resource), holder, h.fencingToken, when(h.since), h.ttl, lock.waiters.join(", ") || "none"]);
    tr.dataset.resource = lock.resource;
    tr.cells[2].className = "token";
    tr.cells[5].className = "waiters";
    body.appendChild(tr);
  }
  $("locks-empty").hidden = view.locks.length > 0;
  more("locks", view.nextPageToken);
}

function renderElections(view) {
  const body = $("elections").tBodies[0];
  body.replaceChildren();
  for (const e of view.elections) {
    const leader = e.leader || {};
    const tr = row([openButton("election", e.election), leader.candidate || "no leader", leader.term, leader.sinceMs ? when(new Date(leader.sinceMs).toISOString()) : "", e.candidates.join(", ") || "none"]);
    tr.dataset.election = e.election;
    tr.cells[1].className = "leader";
    tr.cells[2].className = "term";
    body.appendChild(tr);
  }
  $("elections-empty").hidden = view.elections.length > 0;
  more("elections", view.nextPageToken);
}

const pages = { locks: "", elections: "" };
function more(kind, next) {
  const button = $(kind + "-more");
  button.hidden = !next;
  button.onclick = () => { pages[kind] = next; refresh(); };
}

function listing(kind) {
  const prefix = state[kind];
  return kind + "?prefix=" + encodeURIComponent(prefix) + (pages[kind] ? "&page_token=" + encodeURIComponent(pages[kind]) : "");
}

let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const [masters, rates, locks, elections] = await Promise.all([api("masters"), api("rates"), api(listing("locks")), api(listing("elections"))]);
    renderMasters(masters);
    renderPlot("plot-acquired", "Acquired", rates.acquired, rates.stepSeconds);
    renderPlot("plot-failed", "Failed", rates.failed, rates.stepSeconds);
    renderPlot("plot-lost", "Lost", rates.lost, rates.stepSeconds);
    renderLocks(locks);
    renderElections(elections);
    $("token-form").hidden = true;
    $("updated").textContent = "Updated " + new Date().toLocaleTimeString();
  } catch (error) {
    if (error.message !== "refused") $("updated").textContent = "Could not update: " + error.message;
  } finally {
    refreshing = false;
  }
}

function describe(kind, message) {
  if (kind === "lock") {
    const h = message.holder || {};
    const event = (message.event || "").replace("WATCH_EVENT_", "");
    return { event, line: event + (h.owner !== undefined ? " · " + (h.owner || "(no owner)") + " · token " + h.fencingToken : ""), fields: [["Held", message.held ? "yes" : "no"], ["Holder", message.held ? h.owner || "(no owner)" : "nobody"], ["Fencing token", message.held ? h.fencingToken : ""], ["Since", message.held ? when(h.since) : ""]] };
  }
  const line = message.elected ? "LEADER " + message.candidate + " · term " + message.term : "NO LEADER";
  return { event: line, line, fields: [["Leader", message.elected ? message.candidate : "nobody"], ["Term", message.elected ? message.term : ""], ["Since", message.elected ? when(message.since) : ""]] };
}

function show(kind, message) {
  const { line, fields } = describe(kind, message);
  const dl = $("follow-state");
  dl.replaceChildren();
  for (const [name, value] of fields) {
    dl.appendChild(el("dt", name));
    dl.appendChild(el("dd", value, "follow-" + name.toLowerCase().replace(/ /g, "-")));
  }
  $("follow-log").appendChild(el("li", new Date().toLocaleTimeString() + " " + line));
}

function stopFollowing() {
  if (state.following) state.following.abort();
  state.following = null;
}

// Follows a lock (Watch) or an election (Observe) until stopped; a stream
// that ends is opened again after a pause.
async function follow(kind, name) {
  stopFollowing();
  const controller = new AbortController();
  state.following = controller;
  $("follow").hidden = false;
  $("follow-h").textContent = "Following " + kind + " " + name;
  $("follow-log").replaceChildren();
  $("follow-state").replaceChildren();
  const url = kind === "lock" ? "watch?resource=" + encodeURIComponent(name) : "observe?election=" + encodeURIComponent(name);
  while (state.following === controller) {
    try {
      const response = await fetch("/status/api/" + url, { headers: headers({ Accept: "text/event-stream" }), signal: controller.signal });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        $("follow-status").textContent = "Refused: " + (body.message || response.statusText);
        return;
      }
      $("follow-status").textContent = "Live";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (event === "result") show(kind, JSON.parse(data));
          else if (event === "error") $("follow-status").textContent = "Stream ended: " + JSON.parse(data).message;
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      $("follow-status").textContent = "Disconnected: " + error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
  }
}

function search(kind) {
  return (event) => {
    event.preventDefault();
    state[kind] = $(kind + "-prefix").value;
    pages[kind] = "";
    refresh();
  };
}

document.addEventListener("DOMContentLoaded", () => {
  $("locks-form").addEventListener("submit", search("locks"));
  $("elections-form").addEventListener("submit", search("elections"));
  $("follow-close").addEventListener("click", () => { stopFollowing(); $("follow").hidden = true; });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("redlockd-token", state.token);
    refresh();
  });
  refresh();
  setInterval(refresh, REFRESH_MS);
});
