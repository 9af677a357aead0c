"""The once-per-period checker of the beat tests: it reads what the worker
executed (beat_app.record's list) and knows nothing of redlockd. The unsafe
control (two plain beats) must make it report duplicates.

- ``aligned``: the period of a send is floor(sent_at / period), the same
  for every beat; each period from ``first`` to ``last`` must have exactly
  one send.
- ``interval`` (due a period after the entry last ran): consecutive sends
  must be at least half a period apart (closer is a duplicate), and at most
  ``longest`` apart (longer is a missed period)."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List


def executions(store, run: str) -> List[dict]:
    """What the worker executed for ``run``, in order of sending."""
    return sorted((json.loads(x) for x in store.lrange(f"executions:{run}", 0, -1)), key=lambda e: e["sent_at"])


def of(entries: List[dict], name: str) -> List[dict]:
    return [e for e in entries if e["name"] == name]


@dataclass
class Report:
    name: str
    sends: int
    #: aligned: period id -> sends in it (more than one); interval: gaps (s) under half a period.
    duplicates: Dict = field(default_factory=dict)
    #: aligned: period ids without a send; interval: gaps (s) over the longest allowed.
    missed: List = field(default_factory=list)

    @property
    def duplicated(self) -> int:
        """How many sends were one too many."""
        if isinstance(self.duplicates, dict):
            return sum(n - 1 for n in self.duplicates.values())
        return len(self.duplicates)

    def __str__(self) -> str:
        return f"{self.name}: {self.sends} sends, {self.duplicated} duplicated {self.duplicates}, missed {self.missed}"


def aligned(entries: List[dict], period: float, first: int, last: int) -> Report:
    """Each period id from ``first`` to ``last`` must have exactly one send
    (sends outside that range count as duplicates too if doubled)."""
    counts = Counter(math.floor(e["sent_at"] / period) for e in entries)
    return Report(
        name="aligned",
        sends=len(entries),
        duplicates={p: n for p, n in sorted(counts.items()) if n > 1},
        missed=[p for p in range(first, last + 1) if counts[p] == 0],
    )


def interval(entries: List[dict], period: float, longest: float) -> Report:
    """Sends must be half a period to ``longest`` seconds apart."""
    times = [e["sent_at"] for e in entries]
    gaps = [round(b - a, 3) for a, b in zip(times, times[1:])]
    return Report(
        name="interval",
        sends=len(entries),
        duplicates=[g for g in gaps if g < period / 2],
        missed=[g for g in gaps if g > longest],
    )


def period_of(t: float, period: float) -> int:
    return math.floor(t / period)
