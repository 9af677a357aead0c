#!/usr/bin/env python3
"""A redlockd client in Python with grpcio.

Shows, against a running daemon:
  (a) Acquire -> a fenced write to a toy storage -> Release, counting the
      lease's validity from the moment the request was SENT and refusing to
      write once it has run out;
  (c) a second Acquire while the lock is held gets acquired=false with
      FAILURE_REASON_TAKEN, and the next lease carries a larger token (so the
      storage rejects the old holder's late write);
  (b) a Hold session: HoldStart -> ACQUIRED -> work while EXTENDED arrives
      (stop on LOST) -> half-close -> RELEASED with held_to_end;
  (d) a Pipeline stream shared by 8 threads, each call matched to its reply
      by id; a bad call answered with a CallError while the stream goes on;
      half-close ends it cleanly.

Usage: python example.py [HOST:PORT]   (else $REDLOCKD_ADDR, else 127.0.0.1:7420)

A daemon with TLS and tenants (README, Security) takes, from the environment:
  REDLOCKD_CA           the CA that signed the daemon's certificate (PEM): TLS
  REDLOCKD_CERT/_KEY    this client's certificate and key, for mutual TLS
  REDLOCKD_TOKEN        the tenant's bearer token, sent on every call

Run gen.sh first (it writes the stubs to gen/). Exits 0 when everything
happened as the API promises, 1 on anything else (a FAIL line says what).
"""

import os
import queue
import sys
import threading
import time
import uuid

import grpc
from google.protobuf.duration_pb2 import Duration

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
try:
    from redlockd.v1 import lock_pb2 as pb
    from redlockd.v1 import lock_pb2_grpc
except ImportError as error:
    sys.exit(f"example.py: cannot import the generated stubs ({error}): run examples/python/gen.sh first")

OWNER = f"examples/python pid {os.getpid()}"
# Sent with every call when the daemon has tenants: `authorization: Bearer`.
TOKEN = os.environ.get("REDLOCKD_TOKEN")
AUTH = (("authorization", f"Bearer {TOKEN}"),) if TOKEN else None
STARTED = time.monotonic()


def log(message):
    print(f"[{time.monotonic() - STARTED:6.3f}s] {message}", flush=True)


class Unexpected(Exception):
    """Something the API promises did not happen: the example fails."""


def expect(condition, what):
    if not condition:
        raise Unexpected(what)


def duration(seconds):
    d = Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


def seconds(d):
    return d.ToNanoseconds() / 1e9


def outcomes(nodes):
    return ",".join(pb.NodeOutcome.Name(n).removeprefix("NODE_OUTCOME_") for n in nodes)


# --- the protected resource -------------------------------------------------


class StaleToken(Exception):
    pass


class FencedStorage:
    """A toy storage: it remembers the highest fencing token it has seen and
    rejects writes that carry a lower one. A real one does this check in the
    same transaction as the write (a conditional update, a compare-and-set)."""

    def __init__(self):
        self.highest_token = 0
        self.data = {}

    def write(self, token, key, value):
        if token < self.highest_token:
            raise StaleToken(f"token {token} < highest seen {self.highest_token}")
        self.highest_token = token
        self.data[key] = (value, token)


# --- Acquire / Release with the client rule ---------------------------------


class ValidityUsedUp(Exception):
    pass


class HeldLease:
    """A granted lease and the deadline the client rule gives it."""

    def __init__(self, lease, sent_at):
        self.resource = lease.resource
        self.value = lease.value  # the secret that proves ownership: never logged
        self.token = lease.fencing_token
        # The client rule: validity counts from when the request was SENT.
        self.deadline = sent_at + seconds(lease.validity)

    def time_left(self):
        return self.deadline - time.monotonic()


def acquire(stub, resource, ttl, wait):
    """Returns (HeldLease or None, the AcquireResponse)."""
    sent_at = time.monotonic()  # taken BEFORE the request goes out
    reply = stub.Acquire(
        pb.AcquireRequest(resource=resource, ttl=duration(ttl), wait=duration(wait), owner=OWNER),
        timeout=wait + 10,  # a gRPC deadline longer than `wait`
        metadata=AUTH,
    )
    if not reply.acquired:
        return None, reply
    return HeldLease(reply.lease, sent_at), reply


def release(stub, lease):
    request = pb.ReleaseRequest(resource=lease.resource, value=lease.value)
    return stub.Release(request, timeout=10, metadata=AUTH).released


def fenced_write(storage, lease, key, value):
    """Writes only while the lease is still valid, and always with its token
    (the token catches what the local check cannot: a pause after it)."""
    left = lease.time_left()
    if left <= 0:
        raise ValidityUsedUp(f"validity ran out {-left:.3f}s ago; not writing")
    storage.write(lease.token, key, value)


def acquire_write_release(stub, resource, storage):
    log(f"== (a) Acquire -> fenced write -> Release on {resource}")
    first, reply = acquire(stub, resource, ttl=5, wait=2)
    expect(first is not None, f"first Acquire not granted: reason={pb.FailureReason.Name(reply.reason)}")
    log(f"acquired: token={first.token} validity left={first.time_left():.3f}s")
    fenced_write(storage, first, "balance", 100)
    log(f"wrote balance=100 with token {first.token}")

    log("== (c) a second Acquire while the first lease is held")
    second, reply = acquire(stub, resource, ttl=5, wait=0)
    expect(second is None, "a second Acquire was granted while the first lease was held")
    expect(
        reply.reason == pb.FAILURE_REASON_TAKEN,
        f"second Acquire: reason={pb.FailureReason.Name(reply.reason)}, wanted FAILURE_REASON_TAKEN",
    )
    log(
        f"second Acquire: acquired=false reason={pb.FailureReason.Name(reply.reason)} "
        f"attempts={reply.attempts} nodes={outcomes(reply.nodes)}"
    )

    expect(release(stub, first), "Release of the first lease answered released=false")
    log(f"released token {first.token}: released=true")

    second, reply = acquire(stub, resource, ttl=5, wait=2)
    expect(second is not None, f"Acquire after Release not granted: reason={pb.FailureReason.Name(reply.reason)}")
    expect(second.token > first.token, f"second token {second.token} is not larger than first {first.token}")
    log(f"acquired again: token={second.token} > {first.token}")
    fenced_write(storage, second, "balance", 200)
    log(f"wrote balance=200 with token {second.token}")
    # The first holder wakes up from a long pause and writes with its old token.
    try:
        storage.write(first.token, "balance", 999)
        raise Unexpected(f"the storage accepted a write with stale token {first.token}")
    except StaleToken as error:
        log(f"late write with the old token rejected by the storage: {error}")
    expect(storage.data["balance"] == (200, second.token), f"storage holds {storage.data['balance']}")
    expect(release(stub, second), "Release of the second lease answered released=false")
    log(f"released token {second.token}: released=true")

    log("== (a) a lease whose validity runs out before the write")
    short, reply = acquire(stub, resource, ttl=0.5, wait=2)
    expect(short is not None, f"short Acquire not granted: reason={pb.FailureReason.Name(reply.reason)}")
    received_at = time.monotonic()
    log(f"acquired: token={short.token} ttl=0.5s validity left={short.time_left():.3f}s")
    time.sleep(max(0.0, short.time_left()) + 0.05)  # the "work" took too long
    try:
        fenced_write(storage, short, "balance", 300)
        raise Unexpected("fenced_write wrote after the validity had run out")
    except ValidityUsedUp as error:
        log(f"write refused: {error}")
    # Once the TTL has passed on the masters too, Release says the critical
    # section was not protected to the end.
    time.sleep(max(0.0, received_at + 0.5 + 0.1 - time.monotonic()))
    expect(not release(stub, short), "Release after the TTL answered released=true")
    log(f"released token {short.token} after its TTL: released=false, as expected")
    return short.token


# --- a Hold session and the LOST contract -----------------------------------


def hold_session(stub, resource, storage, previous_token):
    log(f"== (b) Hold session on {resource}")
    half_close = threading.Event()

    def requests():
        yield pb.HoldRequest(
            start=pb.HoldStart(resource=resource, ttl=duration(2), wait=duration(5), owner=OWNER, max_hold=duration(60))
        )
        half_close.wait()
        # The iterator ends here: grpcio half-closes the stream (done writing)
        # and the daemon releases at once.

    call = stub.Hold(requests(), timeout=60, metadata=AUTH)
    events = queue.Queue()  # (monotonic time of receipt, HoldResponse | None at the end | RpcError)

    def read():
        try:
            for message in call:
                events.put((time.monotonic(), message))
            events.put((time.monotonic(), None))
        except grpc.RpcError as error:
            events.put((time.monotonic(), error))

    threading.Thread(target=read, name="hold-reader", daemon=True).start()

    def next_event(timeout):
        try:
            received_at, message = events.get(timeout=timeout)
        except queue.Empty:
            return None, None
        if isinstance(message, grpc.RpcError):
            raise message
        expect(message is not None, "the Hold stream ended without a final event")
        return received_at, message

    try:
        received_at, message = next_event(timeout=15)
        expect(message is not None, "no Hold event within 15s")
        expect(
            message.event == pb.HOLD_EVENT_ACQUIRED,
            f"first Hold event is {pb.HoldEvent.Name(message.event)} ({message.reason}), wanted ACQUIRED",
        )
        token = message.lease.fencing_token
        # The LOST contract: each validity counts from the moment it is RECEIVED.
        deadline = received_at + seconds(message.lease.validity)
        log(f"ACQUIRED: token={token} validity={seconds(message.lease.validity):.3f}s")
        expect(token > previous_token, f"session token {token} is not larger than {previous_token}")

        other, reply = acquire(stub, resource, ttl=5, wait=0)
        expect(other is None, "an Acquire was granted while the Hold session held the lock")
        log(f"meanwhile Acquire elsewhere: acquired=false reason={pb.FailureReason.Name(reply.reason)}")

        extended, step = 0, 0
        work_ends = time.monotonic() + 3.0  # ~4 extensions at ttl/3
        while time.monotonic() < work_ends:
            # One unit of work every 200ms; in between, hear the daemon.
            received_at, message = next_event(timeout=0.2)
            if message is not None:
                if message.event == pb.HOLD_EVENT_EXTENDED:
                    deadline = received_at + seconds(message.lease.validity)
                    extended += 1
                    expect(message.lease.fencing_token == token, "the token changed within a session")
                    log(f"EXTENDED #{extended}: validity={seconds(message.lease.validity):.3f}s")
                elif message.event == pb.HOLD_EVENT_LOST:
                    log(f"LOST ({message.reason}): stopping work now")
                    raise Unexpected(f"the session lost its lock: {message.reason}")
                else:
                    raise Unexpected(f"unexpected Hold event {pb.HoldEvent.Name(message.event)} ({message.reason})")
            if time.monotonic() >= deadline:
                log("own validity deadline passed without EXTENDED: stopping work now")
                raise Unexpected("the session's validity ran out before an extension arrived")
            step += 1
            storage.write(token, "hold-step", step)
        log(f"did {step} fenced writes with token {token}; {extended} extensions")
        expect(extended >= 2, f"only {extended} EXTENDED events in 3s with ttl=2s")

        log("half-closing the stream (end of the request iterator)")
        half_close.set()
        while True:
            _, message = next_event(timeout=10)
            expect(message is not None, "no RELEASED within 10s of half-closing")
            if message.event != pb.HOLD_EVENT_EXTENDED:
                break
        expect(
            message.event == pb.HOLD_EVENT_RELEASED,
            f"after half-close got {pb.HoldEvent.Name(message.event)} ({message.reason}), wanted RELEASED",
        )
        log(f"RELEASED: held_to_end={message.held_to_end} reason={message.reason!r}")
        expect(message.held_to_end, "RELEASED with held_to_end=false")
        _, end = events.get(timeout=10)
        expect(end is None, f"the stream did not end cleanly after RELEASED: {end}")
    finally:
        half_close.set()
        call.cancel()  # a no-op once the stream has ended

    # Released at once, not a TTL later: the lock is free right away.
    after, reply = acquire(stub, resource, ttl=5, wait=0)
    expect(after is not None, f"lock not free after RELEASED: reason={pb.FailureReason.Name(reply.reason)}")
    expect(after.token > token, f"token {after.token} after the session is not larger than {token}")
    log(f"free again at once: acquired token={after.token} > {token}")
    expect(release(stub, after), "Release after the session answered released=false")


# --- many calls on one Pipeline stream ---------------------------------------


class Pipeline:
    """One Pipeline stream shared by any number of threads: each call gets an
    id, goes down the stream, and waits for the reply with that id, which one
    reader thread hands over. Replies come as calls finish, not in order."""

    def __init__(self, stub):
        self._calls = queue.Queue()  # PipelineRequest, or None to half-close
        self._lock = threading.Lock()
        self._waiting = {}  # id -> [threading.Event, PipelineResponse | None]
        self._next_id = 0
        self.ended = None  # None while open; then "ok" or the RpcError
        self._stream = stub.Pipeline(self._requests(), metadata=AUTH)
        self._reader = threading.Thread(target=self._read, name="pipeline-reader", daemon=True)
        self._reader.start()

    def _requests(self):
        while True:
            call = self._calls.get()
            if call is None:
                return  # the iterator ends: grpcio half-closes the stream
            yield call

    def _read(self):
        ended = "ok"
        try:
            for reply in self._stream:
                with self._lock:
                    slot = self._waiting.pop(reply.id, None)
                if slot is not None:
                    slot[1] = reply
                    slot[0].set()
        except grpc.RpcError as error:
            ended = error
        with self._lock:
            self.ended = ended
            for slot in self._waiting.values():
                slot[0].set()  # with no reply: the stream ended first
            self._waiting.clear()

    def call(self, **call):
        """Sends one call (acquire=, extend= or release=) and returns its
        PipelineResponse."""
        with self._lock:
            expect(self.ended is None, f"the Pipeline stream has ended: {self.ended}")
            call_id = self._next_id
            self._next_id += 1
            slot = self._waiting[call_id] = [threading.Event(), None]
        self._calls.put(pb.PipelineRequest(id=call_id, **call))
        expect(slot[0].wait(timeout=30), f"no reply to call {call_id} within 30s")
        expect(slot[1] is not None, f"the Pipeline stream ended before call {call_id} was answered: {self.ended}")
        expect(slot[1].id == call_id, f"call {call_id} got the reply of call {slot[1].id}")
        return slot[1]

    def close(self):
        """Half-closes; the daemon answers what is in flight and ends the stream."""
        self._calls.put(None)
        self._reader.join(timeout=10)
        expect(self.ended == "ok", f"the Pipeline stream did not end cleanly: {self.ended}")


def pipeline(stub, resource):
    log(f"== (d) a Pipeline stream: many calls from many threads on one stream ({resource}/...)")
    stream = Pipeline(stub)
    tokens = {}

    def worker(n):
        name = f"{resource}/p{n}"
        sent_at = time.monotonic()
        reply = stream.call(acquire=pb.AcquireRequest(resource=name, ttl=duration(5), owner=OWNER))
        expect(reply.WhichOneof("result") == "acquire", f"{name}: {reply}")
        expect(reply.acquire.acquired, f"{name} not granted on the stream")
        lease = HeldLease(reply.acquire.lease, sent_at)
        expect(lease.time_left() > 0, f"{name}: no validity left")
        # The unary API sees the same lock.
        other, _ = acquire(stub, name, ttl=5, wait=0)
        expect(other is None, f"{name} was granted twice")
        released = stream.call(release=pb.ReleaseRequest(resource=name, value=lease.value))
        expect(released.release.released, f"{name}: released=false")
        tokens[n] = lease.token

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    failures = []
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        if thread.is_alive():
            failures.append("a worker did not finish within 60s")
    expect(not failures and len(tokens) == 8, f"{len(tokens)} of 8 workers finished: {failures}")
    log(f"8 threads took and released 8 locks on one stream: tokens {sorted(tokens.values())}")

    # A bad call is answered with a CallError naming the field; the stream goes on.
    bad = stream.call(acquire=pb.AcquireRequest(resource=f"{resource}/bad", ttl=duration(3600), owner=OWNER))
    expect(bad.WhichOneof("result") == "error", f"an out-of-range ttl was not refused: {bad}")
    expect(
        bad.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and "ttl" in bad.error.message,
        f"the refusal does not name ttl: code={bad.error.code} {bad.error.message!r}",
    )
    log(f"ttl=3600s refused on the stream: code={bad.error.code} {bad.error.message!r}")
    again = stream.call(acquire=pb.AcquireRequest(resource=f"{resource}/bad", ttl=duration(5), owner=OWNER))
    expect(again.acquire.acquired, "the stream did not go on after a refused call")
    lease = again.acquire.lease
    expect(stream.call(release=pb.ReleaseRequest(resource=lease.resource, value=lease.value)).release.released, "release on the stream: released=false")
    stream.close()
    log("half-closed: the stream ended cleanly")


def channel_to(address):
    """Plain gRPC to a loopback sidecar; TLS (mutual with a client
    certificate) when REDLOCKD_CA names the daemon's CA."""
    ca = os.environ.get("REDLOCKD_CA")
    if not ca:
        return grpc.insecure_channel(address)

    def read(variable):
        name = os.environ.get(variable)
        if not name:
            return None
        with open(name, "rb") as f:
            return f.read()

    credentials = grpc.ssl_channel_credentials(
        root_certificates=read("REDLOCKD_CA"),
        private_key=read("REDLOCKD_KEY"),
        certificate_chain=read("REDLOCKD_CERT"),
    )
    return grpc.secure_channel(address, credentials)


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("REDLOCKD_ADDR", "127.0.0.1:7420")
    resource = f"examples/python/{uuid.uuid4().hex[:8]}"  # fresh per run
    tls = "mutual TLS" if os.environ.get("REDLOCKD_CERT") else "TLS" if os.environ.get("REDLOCKD_CA") else "plaintext"
    log(f"redlockd at {address} ({tls}, {'a bearer token' if TOKEN else 'no token'})")
    with channel_to(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=30)
        except grpc.FutureTimeoutError:
            raise Unexpected(f"could not connect to {address} within 30s")
        stub = lock_pb2_grpc.LockStub(channel)
        storage = FencedStorage()
        last_token = acquire_write_release(stub, resource, storage)
        hold_session(stub, resource, storage, last_token)
        pipeline(stub, resource)
    log("OK: every outcome was as expected")


if __name__ == "__main__":
    try:
        main()
    except Unexpected as error:
        log(f"FAIL: {error}")
        sys.exit(1)
    except grpc.RpcError as error:
        log(f"FAIL: gRPC error {error.code().name}: {error.details()}")
        sys.exit(1)
