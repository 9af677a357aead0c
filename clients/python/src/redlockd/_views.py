"""Views (docs/design.md#observe-and-watch): ``observe`` and ``watch`` as an
iterator (``View``, blocking) and an async iterator (``AsyncView``) over a
server stream, each message converted by the core. A view is not a lock:
by the time a state arrives it may have changed. Closing the view (or
leaving its ``with`` block, or breaking out of a ``for`` over it and
dropping it) ends the stream."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Generic, TypeVar

import grpc
import grpc.aio

from ._errors import from_rpc_error

S = TypeVar("S")


class View(Generic[S]):
    """Each state of a server stream, converted; the iteration ends when
    the daemon ends the stream (it is shutting down) or ``close()`` is
    called, and raises the typed error when the stream fails."""

    def __init__(self, call, convert: Callable[[Any], S]):
        self._call = call
        self._convert = convert
        self._closed = False

    def __iter__(self) -> "View[S]":
        return self

    def __next__(self) -> S:
        try:
            message = next(self._call)
        except grpc.RpcError as e:
            if self._closed:
                raise StopIteration from None
            raise from_rpc_error(e) from None
        return self._convert(message)

    def close(self) -> None:
        """Ends the stream."""
        self._closed = True
        self._call.cancel()

    def __enter__(self) -> "View[S]":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        call = getattr(self, "_call", None)
        if call is not None and not self._closed:
            call.cancel()


class AsyncView(Generic[S]):
    """As ``View``, with ``async for`` and ``async with``; ``await
    view.close()`` ends the stream."""

    def __init__(self, call, convert: Callable[[Any], S]):
        self._call = call
        self._convert = convert
        self._closed = False

    def __aiter__(self) -> "AsyncView[S]":
        return self

    async def __anext__(self) -> S:
        try:
            message = await self._call.read()
        except grpc.RpcError as e:
            if self._closed:
                raise StopAsyncIteration from None
            raise from_rpc_error(e) from None
        except asyncio.CancelledError:
            if self._closed:
                raise StopAsyncIteration from None
            raise
        if message is grpc.aio.EOF:
            raise StopAsyncIteration
        return self._convert(message)

    async def close(self) -> None:
        """Ends the stream."""
        self._closed = True
        self._call.cancel()

    async def __aenter__(self) -> "AsyncView[S]":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
