"""The caller's trace context on every call (docs/tracing.md#clients): when
the application uses OpenTelemetry, each call carries the current span's W3C
``traceparent`` (and ``tracestate``) as metadata, so the daemon's span for
it joins the application's trace. The package does not depend on
OpenTelemetry: without ``opentelemetry-api`` installed there are no
interceptors at all, and with it but no span current, nothing is added."""

from typing import Any, Callable, List, Optional, Tuple

import grpc
import grpc.aio

try:  # pragma: no cover - which branch runs depends on the environment
    from opentelemetry import propagate as _propagate
except ImportError:  # OpenTelemetry not installed: nothing to propagate.
    _propagate = None

Metadata = Optional[Tuple[Tuple[str, str], ...]]


def _with_context(metadata: Any) -> Any:
    """``metadata`` with the current trace context added, or as it was."""
    carrier: dict = {}
    _propagate.inject(carrier)  # type: ignore[union-attr]
    if not carrier:
        return metadata
    return tuple(metadata or ()) + tuple(carrier.items())


class _Details(grpc.ClientCallDetails):
    def __init__(self, details: grpc.ClientCallDetails, metadata: Metadata):
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class _Sync(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    @staticmethod
    def _go(continuation: Callable, details: grpc.ClientCallDetails, request: Any) -> Any:
        return continuation(_Details(details, _with_context(details.metadata)), request)

    intercept_unary_unary = _go
    intercept_unary_stream = _go
    intercept_stream_unary = _go
    intercept_stream_stream = _go


def _aio_details(details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(
        details.method,
        details.timeout,
        _with_context(details.metadata),
        details.credentials,
        details.wait_for_ready,
    )


class _UnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):  # type: ignore[override]
        return await continuation(_aio_details(details), request)


class _UnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, details, request):  # type: ignore[override]
        return await continuation(_aio_details(details), request)


class _StreamUnary(grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation, details, requests):  # type: ignore[override]
        return await continuation(_aio_details(details), requests)


class _StreamStream(grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation, details, requests):  # type: ignore[override]
        return await continuation(_aio_details(details), requests)


def traced(channel: grpc.Channel) -> grpc.Channel:
    """A blocking channel whose calls carry the trace context (``channel``
    itself without OpenTelemetry)."""
    if _propagate is None:
        return channel
    return grpc.intercept_channel(channel, _Sync())


def aio_interceptors() -> Optional[List[grpc.aio.ClientInterceptor]]:
    """The interceptors of an asyncio channel (none without OpenTelemetry)."""
    if _propagate is None:
        return None
    return [_UnaryUnary(), _UnaryStream(), _StreamUnary(), _StreamStream()]
