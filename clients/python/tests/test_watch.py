"""Client.watch and AsyncClient.watch: who holds a lock, then each change,
against a real daemon."""

import asyncio
import queue
import threading

from conftest import hold_in_a_child

import redlockd
from redlockd.v1 import lock_pb2 as pb


def test_watch_names_the_holder_and_each_change(client, resource):
    changes = queue.Queue()
    with client.watch(resource) as view:

        def follow():
            for change in view:
                changes.put(change)

        threading.Thread(target=follow, daemon=True).start()
        now = changes.get(timeout=5)
        assert now.event == pb.WATCH_EVENT_CURRENT and not now.held
        lease = client.acquire(resource, ttl=10, owner="watched-owner")
        acquired = changes.get(timeout=5)
        assert acquired.event == pb.WATCH_EVENT_ACQUIRED and acquired.held
        assert acquired.holder.owner == "watched-owner" and acquired.holder.fencing_token >= lease.fencing_token
        assert lease.release() is True
        released = changes.get(timeout=5)
        assert released.event == pb.WATCH_EVENT_RELEASED and not released.held
        assert released.holder.owner == "watched-owner"
        client.acquire(resource, ttl=0.5, owner="left-to-expire")
        assert changes.get(timeout=5).event == pb.WATCH_EVENT_ACQUIRED
        expired = changes.get(timeout=5)  # within the TTL and a watch period
        assert expired.event == pb.WATCH_EVENT_EXPIRED and expired.holder.owner == "left-to-expire"


def test_a_watch_opened_on_a_held_lock_starts_with_its_holder(client, resource):
    holder = hold_in_a_child(resource)
    try:
        assert holder.stdout.readline().strip() == "held"
        with client.watch(resource) as view:
            now = next(view)
        assert now.event == pb.WATCH_EVENT_CURRENT and now.held and now.holder.fencing_token > 0
    finally:
        holder.kill()
        holder.wait()


def test_async_watch_follows_a_hold_session(resource):
    async def run():
        async with redlockd.AsyncClient() as client:
            async with client.watch(resource) as view:
                changes = view.__aiter__()
                now = await asyncio.wait_for(changes.__anext__(), 5)
                assert now.event == pb.WATCH_EVENT_CURRENT and not now.held
                async with client.hold(resource, ttl=5, owner="async-holder") as lease:
                    acquired = await asyncio.wait_for(changes.__anext__(), 5)
                    assert acquired.event == pb.WATCH_EVENT_ACQUIRED
                    assert acquired.holder.owner == "async-holder"
                    assert acquired.holder.fencing_token >= lease.fencing_token
                released = await asyncio.wait_for(changes.__anext__(), 5)
                assert released.event == pb.WATCH_EVENT_RELEASED
            # Closed: the iteration ends rather than raising.
            assert [change async for change in view] == []

    asyncio.run(run())
