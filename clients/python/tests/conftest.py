"""The tests run against a real daemon and five real masters, started by
``scripts/with-dev-daemon`` (``test.sh`` does it): REDLOCKD_ADDR names the
daemon, REDLOCKD_DEV_DAEMON_PID its process, REDLOCKD_DEV_MASTER_PIDS and
REDLOCKD_DEV_MASTER_PORTS its masters."""

import os
import subprocess
import sys
import time
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


@pytest.fixture
def election():
    # Elections and locks live apart; a tenant's prefixes apply to both.
    return f"examples/py-election-{uuid.uuid4().hex[:12]}"


def master_ports():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PORTS"].split()]


def master_pids():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PIDS"].split()]


def redis(port, *args):
    """One command to one master, with redis-cli; its reply."""
    done = subprocess.run(["redis-cli", "-p", str(port), *map(str, args)], check=True, capture_output=True, text=True)
    return done.stdout.strip()


# Every key of a lock carries its bucket's hash tag (docs/design.md#keys):
# a lock is ``redlockd:{<tag>}:lock:<resource>``, and each bucket has a fence
# counter ``redlockd:{<tag>}:fence`` and a marker ``redlockd:{<tag>}:verified``
# on every master that the daemon verified. The tests find keys with KEYS in
# a Lua script rather than compute the tag.
BUCKETS = 16384

DELETE_MATCHING = """
local n = 0
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('DEL', key) end
return n
"""

HIGHEST_FENCE = """
local highest = 0
for _, key in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do
  highest = math.max(highest, tonumber(redis.call('GET', key)))
end
return highest
"""

# Every bucket the master verified (its marker) gets its fence counter set.
# (A bucket's counter is written by its first lock, so a fresh bucket has
# none: the markers name every bucket once the daemon verified the master.)
SET_EVERY_FENCE = """
local markers = redis.call('KEYS', 'redlockd:{*}:verified')
for _, marker in ipairs(markers) do
  redis.call('SET', string.sub(marker, 1, -1 - #'verified') .. 'fence', ARGV[1])
end
return #markers
"""


def glob_escaped(text):
    """``text`` as a KEYS pattern that matches only itself."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def delete_lock_everywhere(resource):
    """Deletes the lock's key on every master (src/api/auth.rs names it
    ``lock:<resource>``, in its bucket under the key prefix ``redlockd``)."""
    pattern = "redlockd:{*}:lock:" + glob_escaped(resource)
    deleted = sum(int(redis(port, "EVAL", DELETE_MATCHING, 0, pattern)) for port in master_ports())
    assert deleted >= 3, f"the lock of {resource} was on {deleted} masters, not a majority"


def raise_fence_counters():
    """Sets the fence counter of every bucket on every master to one value
    above all of them (never lower: tokens must keep rising), and at least
    2^50 so that tokens (16 times it) pass 2^53, and returns it."""
    counter = max([2**50] + [int(redis(port, "EVAL", HIGHEST_FENCE, 0)) for port in master_ports()]) + 12_345
    assert counter < 2**53, "the daemon keeps counters below 2^53"
    for port in master_ports():
        # Right after the daemon started, it may still be verifying the master.
        deadline = time.monotonic() + 10
        while (buckets := int(redis(port, "EVAL", SET_EVERY_FENCE, 0, counter))) < BUCKETS:
            assert time.monotonic() < deadline, f"the master on port {port} has {buckets} verified buckets, not {BUCKETS}"
            time.sleep(0.1)
        assert buckets == BUCKETS, f"the master on port {port} has {buckets} buckets"
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


def daemon_pid():
    """The daemon's pid (to freeze it with SIGSTOP), from with-dev-daemon."""
    return int(os.environ["REDLOCKD_DEV_DAEMON_PID"])


def campaign_in_a_child(election, candidate, lock_delay=None):
    """A child Python process that leads ``election`` (TTL 30 s, the given
    ``lock_delay``) and says "elected <term>"; the caller kills it."""
    body = (
        "import time, redlockd\n"
        f"with redlockd.Client().campaign({election!r}, {candidate!r}, ttl=30, lock_delay={lock_delay!r}) as l:\n"
        "    print('elected', l.term, flush=True)\n"
        "    time.sleep(60)\n"
    )
    return subprocess.Popen([sys.executable, "-c", body], stdout=subprocess.PIPE, text=True)
