"""The APScheduler process of test_apscheduler.py: a BlockingScheduler with
two jobs whose run times are the same in every process, each appending when
it ran and its term to the Redis list the checker (beat_check.py) reads.

- ``aligned``: an interval trigger from a fixed start_date, coalescing;
- ``every``: a cron trigger, every BEAT_PERIOD seconds, not coalescing: a
  scheduler that waited in line longer than the 2 s misfire_grace_time
  has run times too late to claim.

``python aps_app.py redlockd`` uses redlockd.apscheduler.LeaderJobStore;
``python aps_app.py memory`` APScheduler's own MemoryJobStore (the unsafe
control). Environment as for beat_app.py. SIGTERM shuts the scheduler down."""

import json
import logging
import os
import signal
import sys
import time
from datetime import datetime, timezone

import redis
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from redlockd import LeadershipLost
from redlockd.apscheduler import LeaderJobStore

BROKER = os.environ["BEAT_BROKER"]
RUN = os.environ["BEAT_RUN"]
PERIOD = int(float(os.environ.get("BEAT_PERIOD", "1")))
STORE = redis.Redis.from_url(BROKER)


def record(name):
    try:
        term = store.term() if isinstance(store, LeaderJobStore) else None
    except LeadershipLost:
        term = "lost"
    # "sent_at": when it ran (the checker's name for the moment a period's work went out).
    STORE.rpush(f"executions:{RUN}", json.dumps({"name": name, "sent_at": time.time(), "term": term}))


logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
if sys.argv[1] == "redlockd":
    store = LeaderJobStore(os.environ["BEAT_ELECTION"], BROKER, ttl=float(os.environ["BEAT_TTL"]))
else:
    store = MemoryJobStore()
scheduler = BlockingScheduler(jobstores={"default": store}, job_defaults={"misfire_grace_time": 2})
scheduler.add_job(record, IntervalTrigger(seconds=PERIOD, start_date=datetime(2020, 1, 1, tzinfo=timezone.utc)),
                  args=("aligned",), id="aligned", coalesce=True)
scheduler.add_job(record, CronTrigger(second=f"*/{PERIOD}"), args=("every",), id="every", coalesce=False)
signal.signal(signal.SIGTERM, lambda *_: scheduler.shutdown(wait=False))
scheduler.start()
