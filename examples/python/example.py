"""A fenced write with the redlockd Python client: two workers take turns on
one lock, and a store that remembers the largest fencing token it has seen
refuses a write from a holder whose lock has been superseded.

    bash examples/python/run.sh          # against a throwaway daemon
"""

import threading

import redlockd


class FencedStore:
    """A store that rejects writes carrying a token older than one it took."""

    def __init__(self):
        self._lock = threading.Lock()
        self.highest = -1
        self.rows = []

    def write(self, token: int, row: str) -> bool:
        with self._lock:
            if token < self.highest:
                return False  # a stale holder: its lock was superseded
            self.highest = token
            self.rows.append(row)
            return True


def main() -> None:
    store = FencedStore()
    client = redlockd.Client()  # REDLOCKD_ADDR (+ REDLOCKD_TOKEN and TLS files, if set)
    resource = "examples/ledger"

    # A session: held while the block runs, released on exit; leaving it
    # after a loss would raise redlockd.LockLost.
    with client.hold(resource, ttl=5, wait=10) as lease:
        assert store.write(lease.fencing_token, "first")
        first = lease.fencing_token

    # acquire/release by hand; contention is a value (None), not an error.
    lease = client.acquire(resource, ttl=5, wait=10)
    assert lease is not None and lease.fencing_token > first
    assert client.acquire(resource, ttl=5) is None, "a second holder got the lock"
    assert store.write(lease.fencing_token, "second")
    assert lease.release()

    # The first holder, paused past its lock, comes back: the store says no.
    assert not store.write(first, "stale"), "the store took a stale token"
    assert store.rows == ["first", "second"]
    client.close()
    print(f"ok: tokens {first} < {lease.fencing_token}; the stale write was refused")


if __name__ == "__main__":
    main()
