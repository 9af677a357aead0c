"""The generated redlockd.v1 messages and stub (from proto/redlockd/v1/lock.proto)."""
