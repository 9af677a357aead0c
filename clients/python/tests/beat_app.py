"""The Celery app of the beat tests (test_celery_beat.py), run by a real
worker and real ``celery beat`` processes: two periodic entries of one
task, ``record``, which appends what it was sent to a Redis list that the
checker (beat_check.py) reads.

- ``aligned``: every BEAT_PERIOD seconds, at multiples of it since the
  epoch (``aligned`` below, a Celery schedule): its periods are the same for
  every beat, so a duplicate is two sends in one period.
- ``interval``: Celery's plain ``timedelta`` schedule, due BEAT_PERIOD after
  the entry last ran: its periods are the gaps between sends.

Each send carries its send time (Celery's ``BeatLazyFunc``, evaluated by the
beat as it sends) and, from redlockd.celery, the leader's term (a header).

Environment: BEAT_BROKER (a redis:// URL), BEAT_RUN (the list's name),
BEAT_PERIOD (seconds, default 1), BEAT_ELECTION, BEAT_TTL."""

import json
import math
import os
import time
from datetime import timedelta

import redis
from celery import Celery
from celery.beat import BeatLazyFunc
from celery.schedules import schedstate, schedule

BROKER = os.environ["BEAT_BROKER"]
RUN = os.environ.get("BEAT_RUN", "none")
PERIOD = float(os.environ.get("BEAT_PERIOD", "1"))


class aligned(schedule):
    """Due once in each period of ``run_every`` counted from the epoch."""

    def is_due(self, last_run_at):
        seconds = self.run_every.total_seconds()
        now = self.now().timestamp()
        left = seconds - now % seconds
        due = math.floor(now / seconds) > math.floor(last_run_at.timestamp() / seconds)
        return schedstate(due, left)


app = Celery("beat_app", broker=BROKER)
app.conf.update(
    broker_connection_retry_on_startup=True,
    beat_enable_remote_control=False,
    redlockd_beat_election=os.environ.get("BEAT_ELECTION", "examples/beat"),
    redlockd_beat_ttl=float(os.environ.get("BEAT_TTL", "3")),
    beat_schedule={
        name: {"task": "beat_app.record", "schedule": every, "args": (name, RUN, BeatLazyFunc(time.time))}
        for name, every in (("aligned", aligned(timedelta(seconds=PERIOD))), ("interval", timedelta(seconds=PERIOD)))
    },
)


@app.task(bind=True)
def record(self, name, run, sent_at):
    seen = {
        "name": name,
        "sent_at": sent_at,
        "term": getattr(self.request, "redlockd_term", None),
        "executed_at": time.time(),
    }
    STORE.rpush(f"executions:{run}", json.dumps(seen))


STORE = redis.Redis.from_url(BROKER)
