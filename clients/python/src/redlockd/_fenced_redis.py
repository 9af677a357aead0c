"""A scheduler's shared state in Redis, fenced by a redlockd election's
term (the integrations' store: ``redlockd.celery``, ``redlockd.apscheduler``).

The leader's rule made concrete: every write carries the writer's term, and
the store refuses a term lower than the highest it has seen (its *fence*).
A leader that is elected first raises the fence to its term and reads the
state in one step (``take_over``), so a write by any earlier term either came
before it (and is read) or comes after it (and is refused). Terms are
compared as decimal strings, exact at any size (Lua's numbers are doubles).

Keys, under ``prefix`` (one per election): ``<prefix>fence`` (the highest
term seen) and ``<prefix>state`` (a hash: one field per schedule entry).
Neither expires."""

from __future__ import annotations

from typing import Dict, List, Optional

# below(a, b): term a is lower than term b (decimal strings, no leading zeros).
_BELOW = """
local function below(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
"""

# KEYS: fence, state. ARGV: term. Raises the fence to the term and returns
# the state as a flat list; {-1, fence} when a later term has written.
_TAKE_OVER = _BELOW + """
local fence = redis.call('GET', KEYS[1]) or '0'
if below(ARGV[1], fence) then return {-1, fence} end
redis.call('SET', KEYS[1], ARGV[1])
return {1, redis.call('HGETALL', KEYS[2])}
"""

# KEYS: fence, state. ARGV: term, field, value. Returns 1 when written,
# {-1, fence} when a later term has written.
_WRITE = _BELOW + """
local fence = redis.call('GET', KEYS[1]) or '0'
if below(ARGV[1], fence) then return {-1, fence} end
if below(fence, ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

# KEYS: fence, state. ARGV: term, field, then values (decimal strings,
# ascending). Returns {1, the values above the field's, which it sets to
# the last of them}, or {-1, fence} when a later term has written.
_CLAIM_AFTER = _BELOW + """
local fence = redis.call('GET', KEYS[1]) or '0'
if below(ARGV[1], fence) then return {-1, fence} end
if below(fence, ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
local last = redis.call('HGET', KEYS[2], ARGV[2])
local claimed = {}
for i = 3, #ARGV do
  if not last or below(last, ARGV[i]) then table.insert(claimed, ARGV[i]) end
end
if #claimed > 0 then redis.call('HSET', KEYS[2], ARGV[2], claimed[#claimed]) end
return {1, claimed}
"""


class StaleTerm(Exception):
    """The store has seen a later term: this leader's writes are refused."""

    def __init__(self, term: int, fence: str):
        super().__init__(f"term {term} is below the store's fence {fence}: a later leader has written; stepping down")
        self.term = term
        self.fence = int(fence)


class FencedState:
    """The state of one election's scheduler in Redis (a ``redis.Redis``)."""

    def __init__(self, redis_client, prefix: str):
        self.redis = redis_client
        self.fence_key = f"{prefix}fence"
        self.state_key = f"{prefix}state"
        self._take_over = redis_client.register_script(_TAKE_OVER)
        self._write = redis_client.register_script(_WRITE)
        self._claim_after = redis_client.register_script(_CLAIM_AFTER)

    def take_over(self, term: int) -> Dict[str, str]:
        """Raises the fence to ``term`` and returns the state (field → value).
        Raises ``StaleTerm`` when a later term has written."""
        got = self._take_over(keys=[self.fence_key, self.state_key], args=[str(term)])
        _check(got, term)
        flat = [x.decode() if isinstance(x, bytes) else x for x in got[1]]
        return dict(zip(flat[::2], flat[1::2]))

    def write(self, term: int, field: str, value: str) -> None:
        """Sets ``field`` to ``value`` as the leader of ``term``; raises
        ``StaleTerm`` when a later term has written."""
        _check(self._write(keys=[self.fence_key, self.state_key], args=[str(term), field, value]), term)

    def claim_after(self, term: int, field: str, values: List[int]) -> List[int]:
        """Of ``values`` (ascending), those above the one ``field`` holds (a
        run time, say): the field is set to the last of them, so that each
        is claimed once, by one term. Raises ``StaleTerm`` when a later term
        has written."""
        got = self._claim_after(keys=[self.fence_key, self.state_key], args=[str(term), field, *map(str, values)])
        _check(got, term)
        return [int(x) for x in got[1]]

    def fence(self) -> Optional[int]:
        """The highest term the store has seen (``None``: none yet)."""
        got = self.redis.get(self.fence_key)
        return None if got is None else int(got)


def _check(got, term: int) -> None:
    if isinstance(got, list) and got and got[0] == -1:
        fence = got[1].decode() if isinstance(got[1], bytes) else str(got[1])
        raise StaleTerm(term, fence)
