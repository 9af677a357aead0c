"""``python -m conformance [--client sync|async|both] [--only ID] [--own-daemon-ids] [--scenarios DIR]``
from clients/python/tests: plays the scenarios that need no daemon of their
own through the blocking ``Client``, then the asyncio ``AsyncClient`` (both
play every scenario: one file, two drivers), a line per scenario; exits 1
when any failed. ``--only ID`` plays one scenario (test.sh gives each one
that kills masters a daemon of its own); ``--own-daemon-ids`` lists those."""

from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import sys

import redlockd

from .calls import Calls
from .play import SCENARIOS, load, play_all


async def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance")
    parser.add_argument("--client", choices=("sync", "async", "both"), default="both")
    parser.add_argument("--only", metavar="ID", help="play this scenario alone")
    parser.add_argument("--own-daemon-ids", action="store_true", help="list the scenarios that kill masters")
    parser.add_argument("--scenarios", metavar="DIR", type=pathlib.Path, default=SCENARIOS, help="another folder of them")
    options = parser.parse_args()
    scenarios = load(options.scenarios)
    if options.own_daemon_ids:
        print("\n".join(s["id"] for s in scenarios if "own-daemon" in s.get("needs", [])))
        return 0
    if options.only and options.only not in {s["id"] for s in scenarios}:
        print(f"conformance: no scenario {options.only!r}", file=sys.stderr)
        return 2
    failed = 0
    if options.client in ("sync", "both"):
        print("conformance: redlockd.Client (blocking)", flush=True)
        with redlockd.Client() as client:
            failed += await play_all(Calls(client), "sync", scenarios, options.only)
    if options.client in ("async", "both"):
        print("conformance: redlockd.AsyncClient (asyncio)", flush=True)
        async with redlockd.AsyncClient() as client:
            failed += await play_all(Calls(client), "async", scenarios, options.only)
    print(f"conformance: {failed} failed", flush=True)
    return 1 if failed else 0


# Not asyncio.run: it would wait for every thread of the default executor,
# and a blocking call stuck past its step's limit must not hang the suite.
status = asyncio.new_event_loop().run_until_complete(main())
sys.stdout.flush()
os._exit(status)
