"""The conformance scenarios (clients/conformance/README.md) played through
the Python clients, blocking and asyncio: ``python -m conformance`` from
clients/python/tests, against the daemon REDLOCKD_ADDR names."""
