"""Plays the conformance scenarios (clients/conformance/README.md): reads
the files, expands their values, runs each step through a client's calls
(``calls.py``), checks what it expects and prints one line per scenario."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import time
import uuid
from typing import Any, Dict, List, Optional

#: The scenario files, from clients/python/tests/conformance.
SCENARIOS = pathlib.Path(__file__).resolve().parents[3] / "conformance" / "scenarios"
#: Buckets every verified master has a marker for (docs/design.md#keys).
BUCKETS = 16384
#: The longest any one step may take before the scenario fails.
STEP_LIMIT = 60.0
COMPARISONS = {
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "ne": lambda a, b: a != b,
}


class Failed(Exception):
    """A step did not meet its expectation: the scenario fails."""


class Skipped(Exception):
    """The client cannot play the scenario (said why)."""


def load(directory: pathlib.Path = SCENARIOS) -> List[dict]:
    """Every scenario of every file, in file order; ids are unique."""
    scenarios: List[dict] = []
    for path in sorted(directory.glob("*.json")):
        scenarios += json.loads(path.read_text())["scenarios"]
    ids = [s["id"] for s in scenarios]
    repeated = {i for i in ids if ids.count(i) > 1}
    if repeated:
        raise SystemExit(f"conformance: scenario ids repeated: {sorted(repeated)}")
    return scenarios


def expand(value: Any, run: str) -> Any:
    """``{run}`` replaced in every string; ``repeat`` and ``numbered`` made."""
    if isinstance(value, str):
        return value.replace("{run}", run)
    if isinstance(value, list):
        return [expand(v, run) for v in value]
    if isinstance(value, dict):
        if set(value) == {"repeat", "times"}:
            return value["repeat"] * value["times"]
        if set(value) == {"numbered", "count"}:
            return [f"{expand(value['numbered'], run)}{i}" for i in range(value["count"])]
        return {k: expand(v, run) for k, v in value.items()}
    return value


def resolve(value: Any, bound: Dict[str, Any]) -> Any:
    """``"$name.field"`` references replaced by what was bound."""
    if isinstance(value, str) and value.startswith("$"):
        name, *path = value[1:].split(".")
        if name not in bound:
            raise Failed(f"{value}: nothing was bound as {name!r}")
        found = bound[name]
        for part in path:
            if not isinstance(found, dict) or part not in found:
                raise Failed(f"{value}: {name} has no {part!r} ({found!r})")
            found = found[part]
        return found
    if isinstance(value, list):
        return [resolve(v, bound) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, bound) for k, v in value.items()}
    return value


def as_u64(value: Any, what: str) -> int:
    """A token or term, exact: an int, or a decimal string (never a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise Failed(f"{what}: {value!r} is not an exact integer")
    return int(value)


def check(actual: Any, expected: Any, what: str) -> None:
    """``actual`` meets ``expected`` (resolved), or ``Failed`` saying why."""
    if isinstance(expected, dict) and expected and set(expected) <= set(COMPARISONS):
        for op, bound in expected.items():
            if not COMPARISONS[op](as_u64(actual, what), as_u64(bound, what)):
                raise Failed(f"{what} was {actual}, expected {op} {bound}")
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Failed(f"{what} was {actual!r}, expected {len(expected)} items {expected!r}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            check(a, e, f"{what}[{i}]")
    elif isinstance(expected, bool) or isinstance(actual, bool):
        if actual is not expected:
            raise Failed(f"{what} was {actual!r}, expected {expected!r}")
    elif isinstance(actual, int):
        if actual != as_u64(expected, what):
            raise Failed(f"{what} was {actual}, expected {expected}")
    elif actual != expected:
        raise Failed(f"{what} was {actual!r}, expected {expected!r}")


def meets(fields: dict, expect: dict, what: str) -> None:
    for key, expected in expect.items():
        if key not in fields:
            raise Failed(f"{what} has no {key} ({fields!r})")
        check(fields[key], expected, f"{what}: {key}")


def seed_counters_above(value: int) -> int:
    """Raises every verified bucket's fence counter on every master so that
    every later token is above ``value``; the counter set."""
    ports = os.environ["REDLOCKD_DEV_MASTER_PORTS"].split()
    highest_script = (
        "local h = 0 for _, k in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do "
        "h = math.max(h, tonumber(redis.call('GET', k))) end return h"
    )
    highest = max(int(_redis(port, "EVAL", highest_script, "0")) for port in ports)
    # A counter already raised near 2^53 (another suite's test of large
    # tokens) is kept: past 2^53 every master would refuse to grant.
    counter = max(highest, value // 16 + 1_000_003)
    if counter >= 2**53:
        raise Failed(f"seed_counters_above: the counter {counter} is past 2^53, where the masters' Lua stops")
    set_script = (
        "local m = redis.call('KEYS', 'redlockd:{*}:verified') for _, k in ipairs(m) do "
        "redis.call('SET', string.sub(k, 1, -1 - #'verified') .. 'fence', ARGV[1]) end return #m"
    )
    for port in ports:
        deadline = time.monotonic() + 10
        while int(_redis(port, "EVAL", set_script, "0", str(counter))) < BUCKETS:
            if time.monotonic() > deadline:
                raise Failed(f"seed_counters_above: the master on port {port} has not verified every bucket")
            time.sleep(0.1)
    return counter


def _redis(port: str, *args: str) -> str:
    done = subprocess.run(["redis-cli", "-p", port, *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


class Player:
    """Plays scenarios through ``calls`` (a ``calls.Calls``), one at a time."""

    def __init__(self, calls, label: str):
        self.calls = calls
        self.label = label

    async def play(self, scenario: dict) -> str:
        """``PASS id``, ``SKIP id: why`` or ``FAIL id: why``."""
        run = f"conformance/py-{self.label}-{uuid.uuid4().hex[:10]}"
        bound: Dict[str, Any] = {}
        handles: Dict[str, Any] = {}
        step_no = 0
        try:
            for step_no, step in enumerate(scenario["steps"], 1):
                step = resolve(expand(step, run), bound)
                what = f"step {step_no} ({step.get('call') or step.get('action')})"
                await asyncio.wait_for(self.step(scenario, step, what, bound, handles), STEP_LIMIT)
            return f"PASS {scenario['id']}"
        except Skipped as e:
            return f"SKIP {scenario['id']}: {e}"
        except Failed as e:
            return f"FAIL {scenario['id']}: {e}"
        except asyncio.TimeoutError:
            return f"FAIL {scenario['id']}: step {step_no} took over {STEP_LIMIT:g} s"
        except Exception as e:  # noqa: BLE001 - an unexpected error fails the scenario, said as it is
            return f"FAIL {scenario['id']}: step {step_no}: {type(e).__name__}: {e}"
        finally:
            await self.calls.clean_up(handles)

    async def step(self, scenario: dict, step: dict, what: str, bound: dict, handles: dict) -> None:
        if "action" in step:
            await self.action(scenario, step, what, bound, handles)
            return
        verb = step["call"]
        args = dict(step.get("args", {}))
        for key in ("lease", "hold", "leadership", "stream", "set"):
            if key in args:
                args[key] = self.handle(handles, args[key], what)
        if "members" in args:
            args["set"] = [args["set"][i] for i in args.pop("members")]
        if "stream" in args and verb == "next":
            await self.next(args, step.get("expect", {}), what)
            return
        try:
            fields, handle = await self.calls.call(verb, args)
        except Failed:
            raise
        except Exception as e:  # noqa: BLE001 - the client's typed errors are what expect_error checks
            if "expect_error" not in step:
                raise Failed(f"{what} raised {type(e).__name__}: {e}") from None
            self.error_meets(e, step["expect_error"], what)
            return
        if "expect_error" in step:
            raise Failed(f"{what} gave {fields!r}, expected the error {step['expect_error']!r}")
        meets(fields, step.get("expect", {}), what)
        if "as" in step:
            bound[step["as"]] = fields
            handles[step["as"]] = handle

    def error_meets(self, error: Exception, expected: dict, what: str) -> None:
        code = self.calls.code(error)
        if code != expected["code"]:
            raise Failed(f"{what} raised {code} ({type(error).__name__}: {error}), expected {expected['code']}")
        message = str(error)
        if "field" in expected and f"invalid {expected['field']}" not in message:
            raise Failed(f"{what}: the message does not name {expected['field']}: {message!r}")
        if "message_contains" in expected and str(expected["message_contains"]) not in message:
            raise Failed(f"{what}: the message does not say {expected['message_contains']}: {message!r}")

    async def next(self, args: dict, expect: dict, what: str) -> None:
        """Reads the stream until a state meets ``expect``, within the limit."""
        within = args.get("within_ms", 10_000) / 1000
        deadline = time.monotonic() + within
        seen = []
        while True:
            left = deadline - time.monotonic()
            fields = await self.calls.next(args["stream"], max(left, 0))
            if fields is None:
                raise Failed(f"{what}: nothing met {expect!r} within {within:g} s; seen {seen!r}")
            try:
                meets(fields, expect, what)
                return
            except Failed:
                seen.append(fields)

    async def action(self, scenario: dict, step: dict, what: str, bound: dict, handles: dict) -> None:
        action = step["action"]
        if action == "sleep":
            await asyncio.sleep(step["ms"] / 1000)
        elif action == "kill_masters":
            if "own-daemon" not in scenario.get("needs", []):
                raise Failed(f"{what}: kills masters, but the scenario does not need its own daemon")
            for pid in os.environ["REDLOCKD_DEV_MASTER_PIDS"].split()[: step["count"]]:
                os.kill(int(pid), signal.SIGKILL)
        elif action == "expect_lost":
            name = step.get("hold") or step.get("leadership")
            handle = self.handle(handles, name, what)
            if not await self.calls.lost(handle, step["within_ms"] / 1000):
                raise Failed(f"{what}: {name} was not told lost within {step['within_ms']} ms")
        elif action == "seed_counters_above":
            counter = await asyncio.to_thread(seed_counters_above, as_u64(step["value"], what))
            bound[step["as"]] = {"counter": str(counter)}
        else:
            raise Failed(f"{what}: no such action {action!r}")

    @staticmethod
    def handle(handles: dict, name: str, what: str) -> Any:
        """A bound handle: ``a``, or ``s.1`` (a set's member)."""
        base, _, index = name.partition(".")
        if base not in handles or handles[base] is None:
            raise Failed(f"{what}: no handle {base!r} was bound")
        return handles[base][int(index)] if index else handles[base]


async def play_all(calls, label: str, scenarios: List[dict], only: Optional[str]) -> int:
    """Plays ``scenarios`` (those that need no daemon of their own, or just
    ``only``); prints a line each; the number that failed."""
    player = Player(calls, label)
    failed = 0
    for scenario in scenarios:
        own = "own-daemon" in scenario.get("needs", [])
        if (only is None and own) or (only is not None and scenario["id"] != only):
            continue
        line = await player.play(scenario)
        print(line, flush=True)
        failed += line.startswith("FAIL")
    return failed
