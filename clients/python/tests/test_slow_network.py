"""A slow and a silent network, made by a TCP proxy in front of the real
daemon. The client rule: a lease's validity counts from the moment the
request was SENT; the proxy holds every reply back for a second, so a
client that counted from the reply would promise the lock for a second
longer than the masters keep it. And a session whose daemon falls silent
is said lost just before its ``valid_until`` (the client's margin)."""

import asyncio
import os
import queue
import socket
import threading
import time

import pytest

import redlockd

DELAY = 1.0


class DelayingProxy:
    """Forwards connections to ``target``; the daemon's bytes reach the
    client ``delay`` seconds after they left the daemon."""

    def __init__(self, target: str, delay: float):
        host, port = target.rsplit(":", 1)
        self._target = (host, int(port))
        self._delay = delay
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.addr = "127.0.0.1:%d" % self._listener.getsockname()[1]
        self._sockets = [self._listener]
        self._frozen = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self):
        """From now on the daemon's bytes are dropped: it seems silent."""
        self._frozen.set()

    def close(self):
        for s in self._sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source, sink, from_daemon):
        delay = self._delay if from_daemon else 0.0
        chunks: "queue.Queue" = queue.Queue()

        def send():
            while True:
                at, data = chunks.get()
                time.sleep(max(0.0, at + delay - time.monotonic()))
                if from_daemon and self._frozen.is_set():
                    continue
                try:
                    sink.sendall(data) if data else sink.shutdown(socket.SHUT_WR)
                except OSError:
                    return
                if not data:
                    return

        threading.Thread(target=send, daemon=True).start()
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            chunks.put((time.monotonic(), data))
            if not data:
                return


def test_validity_counts_from_the_send_not_from_the_reply(resource):
    proxy = DelayingProxy(os.environ["REDLOCKD_ADDR"], DELAY)
    try:
        with redlockd.Client(proxy.addr) as slow:
            assert slow.acquire(resource + "-warm-up", ttl=1) is not None  # connects
            sent = time.monotonic()
            lease = slow.acquire(resource, ttl=5)
            received = time.monotonic()
            assert received - sent >= DELAY
            validity = lease.valid_until - sent
            assert 4 < validity <= 5
            assert lease.valid_until <= sent + 5, "counted from the reply"
            # Counted from the reply, it would have promised past the TTL:
            assert received + validity > sent + 5
            sent = time.monotonic()
            assert lease.extend(5) is True
            assert time.monotonic() - sent >= DELAY and lease.valid_until <= sent + 5
            assert lease.release() is True
    finally:
        proxy.close()


def test_async_validity_counts_from_the_send(resource):
    proxy = DelayingProxy(os.environ["REDLOCKD_ADDR"], DELAY)

    async def run():
        async with redlockd.AsyncClient(proxy.addr) as slow:
            assert await slow.acquire(resource + "-warm-up", ttl=1) is not None
            sent = time.monotonic()
            lease = await slow.acquire(resource, ttl=5)
            assert time.monotonic() - sent >= DELAY
            assert sent + 4 < lease.valid_until <= sent + 5
            await lease.release()

    try:
        asyncio.run(run())
    finally:
        proxy.close()


def test_a_session_whose_daemon_falls_silent_is_lost_when_valid_until_passes(client, resource):
    proxy = DelayingProxy(os.environ["REDLOCKD_ADDR"], 0.0)
    try:
        with redlockd.Client(proxy.addr) as cut_off:
            with pytest.raises(redlockd.LockLost, match="no extension"):
                with cut_off.hold(resource, ttl=1) as lease:
                    proxy.freeze()  # the daemon goes on extending; nobody hears it
                    assert lease.lost.wait(5), "never told"
                    told, until = time.monotonic(), lease.valid_until
            # By the client's own watch, before valid_until by at most the
            # margin (checked out here: leaving the block raised LockLost).
            assert until - 0.1 <= told < until, f"told {(until - told) * 1000:.1f} ms before valid_until"
            # Leaving cancelled the session: the daemon released at once.
            assert client.acquire(resource, ttl=5, wait=0.5) is not None
    finally:
        proxy.close()


def test_async_a_silent_daemon_loses_the_session(resource):
    proxy = DelayingProxy(os.environ["REDLOCKD_ADDR"], 0.0)

    async def run():
        async with redlockd.AsyncClient(proxy.addr) as cut_off:
            with pytest.raises(redlockd.LockLost, match="no extension"):
                async with cut_off.hold(resource, ttl=1) as lease:
                    proxy.freeze()
                    await asyncio.wait_for(lease.lost.wait(), 5)
                    told, until = time.monotonic(), lease.valid_until
            assert until - 0.1 <= told < until, f"told {(until - told) * 1000:.1f} ms before valid_until"

    try:
        asyncio.run(run())
    finally:
        proxy.close()


def test_a_daemon_that_never_answers_does_not_hang_the_caller(monkeypatch, resource):
    import redlockd._aio_hold
    import redlockd._hold
    import redlockd._sync

    for module in (redlockd._sync, redlockd._hold, redlockd._aio_hold):
        monkeypatch.setattr(module, "CALL_SLACK", 0.5)  # 30 s in real life
    proxy = DelayingProxy(os.environ["REDLOCKD_ADDR"], 0.0)
    proxy.freeze()  # not a byte from the daemon, not even its handshake
    try:
        with redlockd.Client(proxy.addr) as unheard:
            started = time.monotonic()
            with pytest.raises(redlockd.DeadlineExceeded):
                unheard.acquire(resource, wait=0.5)
            with pytest.raises(redlockd.DeadlineExceeded):
                with unheard.hold(resource, wait=0.5):
                    pytest.fail("entered without an answer")
            assert time.monotonic() - started < 5

        async def run():
            async with redlockd.AsyncClient(proxy.addr) as unheard:
                with pytest.raises(redlockd.DeadlineExceeded):
                    async with unheard.hold(resource, wait=0.5):
                        pytest.fail("entered without an answer")

        asyncio.run(run())
    finally:
        proxy.close()
