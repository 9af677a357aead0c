"""A fenced write with the redlockd Python client. Holder A takes the lock,
then stalls (a GC pause, a slow disk) past its validity; holder B takes the
lock over and writes; A wakes up and writes under its expired lock. The
store remembers the largest fencing token it has seen and refuses A.

    bash examples/python/run.sh          # against a throwaway daemon, plain and --secure
"""

import time

import redlockd


class FencedStore:
    """A store that refuses writes carrying a token below one it has seen."""

    def __init__(self):
        self.highest = -1
        self.rows = {}

    def write(self, fencing_token: int, key: str, value) -> bool:
        if fencing_token < self.highest:
            return False  # a stale holder: its lock was superseded
        self.highest = fencing_token
        self.rows[key] = value
        return True


def main() -> None:
    client = redlockd.Client()  # REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA/CERT/KEY
    store = FencedStore()
    resource = "examples/ledger"

    # A: a lease it must keep alive itself; contention would be None, not an error.
    a = client.acquire(resource, ttl=0.5, wait=10)
    assert a is not None, "A did not get the lock"
    time.sleep(a.remaining + 0.3)  # A stalls; its lock expires on the masters

    # B: a Hold session, kept alive by the daemon; leaving the block releases
    # it, and raises redlockd.LockLost had the lock been lost meanwhile.
    with client.hold(resource, ttl=5, wait=10) as b:
        assert not b.lost.is_set()
        assert store.write(b.fencing_token, "balance", 100), "B was refused"

    # A wakes up and writes as if it still held the lock: refused.
    assert not store.write(a.fencing_token, "balance", 0), "the store took a stale token"
    # And A learns it: a release of an expired lock says False.
    assert a.release() is False
    assert store.rows == {"balance": 100}
    client.close()
    print(f"ok: B's token {b.fencing_token} > A's {a.fencing_token}; A's stale write was refused")


if __name__ == "__main__":
    main()
