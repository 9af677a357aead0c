"""The tests run against a real daemon and five real masters, started by
``scripts/with-dev-daemon`` (``test.sh`` does it): REDLOCKD_ADDR names the
daemon, REDLOCKD_DEV_MASTER_PIDS and REDLOCKD_DEV_MASTER_PORTS its masters."""

import os
import subprocess
import sys
import uuid

import pytest

import redlockd


def pytest_configure(config):
    if not os.environ.get("REDLOCKD_ADDR"):
        raise pytest.UsageError("REDLOCKD_ADDR is not set: run the tests through clients/python/test.sh")


@pytest.fixture
def client():
    with redlockd.Client() as client:
        yield client


@pytest.fixture
def resource():
    # Under "examples/": the prefix the secure daemon's tenant may lock.
    return f"examples/py-{uuid.uuid4().hex[:12]}"


def master_ports():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PORTS"].split()]


def master_pids():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PIDS"].split()]


def redis(port, *args):
    """One command to one master, with redis-cli; its reply."""
    done = subprocess.run(["redis-cli", "-p", str(port), *map(str, args)], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def delete_lock_everywhere(resource):
    """Deletes the lock's key on every master (src/api/auth.rs names it
    ``lock:<resource>`` under the key prefix ``redlockd``)."""
    for port in master_ports():
        redis(port, "DEL", f"redlockd:lock:{resource}")


def raise_fence_counters():
    """Sets every master's fence counter to one value above all of them
    (never lower: tokens must keep rising) and returns it."""
    counters = [int(redis(port, "GET", "redlockd:fence") or 0) for port in master_ports()]
    counter = max(counters) + 12_345
    assert counter < 2**53, "the daemon keeps counters below 2^53"
    for port in master_ports():
        redis(port, "SET", "redlockd:fence", counter)
    return counter


def hold_in_a_child(resource, use_async=False):
    """A child Python process that holds ``resource`` in a Hold session (TTL
    30 s) and says "held"; the caller kills it."""
    if use_async:
        body = (
            "import asyncio, redlockd\n"
            "async def main():\n"
            "    async with redlockd.AsyncClient() as c:\n"
            f"        async with c.hold({resource!r}, ttl=30):\n"
            "            print('held', flush=True)\n"
            "            await asyncio.sleep(60)\n"
            "asyncio.run(main())\n"
        )
    else:
        body = (
            "import time, redlockd\n"
            f"with redlockd.Client().hold({resource!r}, ttl=30):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n"
        )
    return subprocess.Popen([sys.executable, "-c", body], stdout=subprocess.PIPE, text=True)
