"""Mutual TLS and a bearer token, read from the environment, against the
``--secure`` daemon (its tenant may lock only "examples/...")."""

import asyncio
import os

import pytest

import redlockd

pytestmark = pytest.mark.secure


@pytest.fixture(autouse=True)
def secure_daemon():
    if not (os.environ.get("REDLOCKD_CA") and os.environ.get("REDLOCKD_TOKEN")):
        pytest.fail("needs the --secure daemon (scripts/with-dev-daemon --secure)")


def test_blocking_tls_and_a_bearer_token_from_the_environment(client, resource):
    lease = client.acquire(resource, ttl=10)
    assert lease is not None and lease.release() is True
    with client.hold(resource, ttl=5) as held:
        assert held.fencing_token > lease.fencing_token
    with pytest.raises(redlockd.PermissionDenied, match="examples/"):
        client.acquire("outside/" + resource, ttl=10)
    with redlockd.Client(token="not-the-token-0123456789abcdefgh") as stranger:
        with pytest.raises(redlockd.Unauthenticated):
            stranger.acquire(resource, ttl=10)
    # TLS from the environment and an http:// address contradict each other.
    with pytest.raises(redlockd.InvalidArgument, match="need an https:// address"):
        redlockd.Client("http://" + os.environ["REDLOCKD_ADDR"])


def test_async_tls_and_a_bearer_token(resource):
    async def run():
        async with redlockd.AsyncClient("https://" + os.environ["REDLOCKD_ADDR"]) as client:
            lease = await client.acquire(resource, ttl=10)
            assert lease is not None and await lease.release() is True
            async with client.hold(resource, ttl=5) as held:
                assert held.fencing_token > lease.fencing_token
            with pytest.raises(redlockd.PermissionDenied):
                await client.acquire("outside/" + resource, ttl=10)
        async with redlockd.AsyncClient(token="not-the-token-0123456789abcdefgh") as stranger:
            with pytest.raises(redlockd.Unauthenticated):
                await stranger.acquire(resource, ttl=10)

    asyncio.run(run())


def test_elections_with_tls_and_a_bearer_token(client, election):
    # The tenant's prefixes apply to election names too.
    with client.campaign(election, candidate="pod-1", value=b"secure") as leadership:
        assert client.leader(election).term == leadership.term
        with client.observe(election) as view:
            assert next(view).term == leadership.term
    with pytest.raises(redlockd.PermissionDenied, match="examples/"):
        with client.campaign("outside/" + election, candidate="pod-1"):
            pytest.fail("elected outside the tenant's prefixes")
    with redlockd.Client(token="not-the-token-0123456789abcdefgh") as stranger:
        with pytest.raises(redlockd.Unauthenticated):
            next(stranger.observe(election))

    async def run():
        async with redlockd.AsyncClient() as client:
            async with client.campaign(election, candidate="pod-2") as leadership:
                assert (await client.leader(election)).candidate == "pod-2" and leadership.term > 0

    asyncio.run(run())
