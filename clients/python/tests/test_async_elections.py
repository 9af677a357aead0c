"""AsyncClient.campaign, leader, observe, proclaim, resign and participants
against a real daemon."""

import asyncio
import time

import pytest

import redlockd


def scenario(coroutine_function):
    """Runs the test's coroutine with an AsyncClient, in a fresh event loop."""

    def test(election):
        async def run():
            async with redlockd.AsyncClient() as client:
                await coroutine_function(client, election)

        asyncio.run(run())

    test.__name__ = coroutine_function.__name__
    return test


async def eventually(check, within=5.0):
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "not within %g s" % within
        await asyncio.sleep(0.05)


@scenario
async def test_a_leader_proclaims_resigns_on_exit_and_hands_over_to_the_next(client, election):
    async def second_candidate():
        async with client.campaign(election, candidate="pod-2", ttl=2, wait=30) as leadership:
            return leadership.term

    async with client.campaign(election, candidate="pod-1", value=b"a", ttl=2) as first:
        assert isinstance(first.lost, asyncio.Event)
        await first.proclaim("b")
        leader = await client.leader(election)
        assert (leader.candidate, leader.value, leader.term, first.value) == ("pod-1", b"b", first.term, b"b")
        second = asyncio.ensure_future(second_candidate())

        async def queued():
            return await client.participants(election) == ["pod-2"]

        await eventually(queued)
        await asyncio.sleep(2.5)  # past the TTL: only extensions keep it
        assert not first.lost.is_set() and not second.done()
        with pytest.raises(redlockd.FailedPrecondition, match=f"the current term is {first.term}"):
            await client.proclaim(election, first.term - 1, b"stale")
    assert await asyncio.wait_for(second, 10) > first.term
    assert await client.leader(election) is None


@scenario
async def test_a_resignation_by_term_is_a_loss_for_the_leader(client, election):
    with pytest.raises(redlockd.LeadershipLost, match="the daemon ended the leadership"):
        async with client.campaign(election, candidate="pod-1") as leadership:
            await client.resign(election, leadership.term)
            await asyncio.wait_for(leadership.lost.wait(), 5)


@scenario
async def test_cancelling_a_waiting_campaign_withdraws_it_and_a_wait_raises_not_elected(client, election):
    async with client.campaign(election, candidate="pod-1"):

        async def waiting():
            async with client.campaign(election, candidate="pod-2"):
                pytest.fail("elected while another led")

        task = asyncio.ensure_future(waiting())

        async def queued():
            return await client.participants(election) == ["pod-2"]

        await eventually(queued)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        async def withdrawn():
            return await client.participants(election) == []

        await eventually(withdrawn)
        with pytest.raises(redlockd.NotElected, match="within 0.3 s"):
            async with client.campaign(election, candidate="pod-3", wait=0.3):
                pytest.fail("elected while another led")


@scenario
async def test_observe_sees_each_leader_then_none(client, election):
    async with client.observe(election) as view:
        states = view.__aiter__()
        assert await asyncio.wait_for(states.__anext__(), 5) is None
        async with client.campaign(election, candidate="pod-1", value=b"v") as leadership:
            seen = await asyncio.wait_for(states.__anext__(), 5)
            assert (seen.candidate, seen.value, seen.term) == ("pod-1", b"v", leadership.term)
        assert await asyncio.wait_for(states.__anext__(), 5) is None
