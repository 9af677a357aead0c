"""The caller's trace context on each call (docs/tracing.md#clients): with an
OpenTelemetry span current, the blocking and the asyncio client send its
W3C traceparent; without one, nothing; without OpenTelemetry installed, the
package installs no interceptor. The calls go over real gRPC to a server
started here that keeps what each call's metadata said."""

import asyncio
import subprocess
import sys
from concurrent import futures

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import redlockd
from redlockd.v1 import lock_pb2, lock_pb2_grpc

trace.set_tracer_provider(TracerProvider())
tracer = trace.get_tracer("redlockd-tests")


class Recording(lock_pb2_grpc.LockServicer):
    def __init__(self):
        self.seen = []

    def Acquire(self, request, context):
        self.seen.append(dict(context.invocation_metadata()))
        return lock_pb2.AcquireResponse(acquired=False, reason=lock_pb2.FAILURE_REASON_TAKEN)


@pytest.fixture
def server():
    recording = Recording()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    lock_pb2_grpc.add_LockServicer_to_server(recording, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", recording
    server.stop(None)


def traceparent_of(span):
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def test_the_blocking_client_sends_the_current_span_as_traceparent(server):
    addr, recording = server
    with redlockd.Client(addr=addr) as client:
        with tracer.start_as_current_span("job") as span:
            assert client.acquire("traced/py", ttl=5) is None
        assert client.acquire("traced/py", ttl=5) is None
    assert recording.seen[0]["traceparent"] == traceparent_of(span)
    assert "traceparent" not in recording.seen[1], "no span current, no context"


def test_the_asyncio_client_sends_the_current_span_as_traceparent(server):
    addr, recording = server

    async def main():
        async with redlockd.AsyncClient(addr=addr) as client:
            with tracer.start_as_current_span("async job") as span:
                assert await client.acquire("traced/py", ttl=5) is None
            return span

    span = asyncio.run(main())
    assert recording.seen[0]["traceparent"] == traceparent_of(span)


def test_without_opentelemetry_no_interceptor_is_installed():
    # A fresh interpreter in which `import opentelemetry` fails, as where it is not installed.
    script = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "import grpc, redlockd\n"
        "from redlockd import _tracing\n"
        "channel = grpc.insecure_channel('127.0.0.1:1')\n"
        "assert _tracing.traced(channel) is channel\n"
        "assert _tracing.aio_interceptors() is None\n"
        "print('untraced')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "untraced", done.stderr
