"""The tests run against a real daemon and five real masters, started by
``scripts/with-dev-daemon`` (``test.sh`` does it): REDLOCKD_ADDR names the
daemon, REDLOCKD_DEV_MASTER_PIDS and REDLOCKD_DEV_MASTER_PORTS its masters."""

import os
import uuid

import pytest

import redlockd


def pytest_configure(config):
    if not os.environ.get("REDLOCKD_ADDR"):
        raise pytest.UsageError("REDLOCKD_ADDR is not set: run the tests through clients/python/test.sh")


@pytest.fixture
def client():
    with redlockd.Client() as client:
        yield client


@pytest.fixture
def resource():
    # Under "examples/": the prefix the secure daemon's tenant may lock.
    return f"examples/py-{uuid.uuid4().hex[:12]}"


def master_ports():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PORTS"].split()]


def master_pids():
    return [int(p) for p in os.environ["REDLOCKD_DEV_MASTER_PIDS"].split()]
