//! Shared locks on one master (docs/design.md#shared-locks): the scripts
//! and the calls for readers. While readers hold a lock, its key holds
//! `SHARED_MARK` (so an exclusive `SET NX` fails as against any holder)
//! until the last reader's deadline, and the readers are a sorted set
//! `<prefix>:readers:<name>` of values scored by their deadlines on the
//! master's clock (ms). Values of shared locks start with `r`
//! (`Mode::of`): `RedisNode` sends them here.

use fred::prelude::Value;

use super::eval::{eval_script, ttl_arg};
use super::node::RedisNode;
use super::replies::{self, Locked};
use super::scripts::{Script, released_channel, run_id_from_info};
use crate::redlock::node::{Announce, Extension, NodeError};
use crate::redlock::{Mode, Permit};

/// Round 1 for a reader. KEYS: the lock key, the fence counter, the
/// marker, the waiting mark, the readers. ARGV: the value, the TTL (ms),
/// this daemon's tag (for the waiting mark).
///
/// Refused (0) while an exclusive holder has the key, or while an
/// exclusive request refused by readers keeps new ones out (a waiting
/// mark `W<ms>:…` still in the future, written by ROUND), unless the value
/// is a reader already (a re-send); a refusal marks the lock as waited for,
/// as ROUND's do (a writer's mark is left as it is). On a
/// node verified in this process (as ROUND checks it: -1, -2) the value
/// joins the readers until now + TTL, the key lives until the last
/// reader's deadline, and the reply is the fence counter, not advanced
/// (seeded from the clock when missing, raised to 1 from 0, since 0 says
/// "refused"; -3 at 2^53). A key that was free
/// drops readers left over from a force release.
pub const SHARE: &str = concat!(
    r"
local held = redis.call('GET', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shared = held ~= false and string.sub(held, 1, 7) == '\tshared'
local mark = redis.call('GET', KEYS[4])
local writer_waits = false
if mark ~= false and string.sub(mark, 1, 1) == 'W' then
  local colon = string.find(mark, ':', 2, true)
  writer_waits = colon ~= nil and tonumber(string.sub(mark, 2, colon - 1)) > now
end
if (held ~= false and not shared) or (writer_waits and not redis.call('ZSCORE', KEYS[5], ARGV[1])) then
  if not writer_waits then
    local who = ARGV[3]
    if mark ~= false and mark ~= who then
      who = '*'
    end
    redis.call('SET', KEYS[4], who, 'PX', tonumber(ARGV[2]) + 10000)
  end
  return 0
end
local marker = redis.call('GET', KEYS[3])
if marker == false then
  return -1
end
",
    run_id_from_info!(),
    r"if not run_id or string.sub(marker, 1, #run_id + 1) ~= run_id .. ':' then
  return -2
end
local stored = redis.call('GET', KEYS[2])
local counter
if stored == false then
  counter = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('SET', KEYS[2], string.format('%d', counter))
elseif tonumber(stored) < 1 then
  counter = 1
  redis.call('SET', KEYS[2], '1')
else
  counter = tonumber(stored)
end
if counter >= 9007199254740992 then
  return -3
end
if shared then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
else
  redis.call('DEL', KEYS[5])
end
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[2]), ARGV[1])
local last = math.floor(tonumber(redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')[2]))
redis.call('SET', KEYS[1], '\tshared', 'PXAT', last)
redis.call('PEXPIREAT', KEYS[5], last)
return counter
"
);

/// Extends readers, a batch in one call: KEYS[2i-1] the lock key and
/// KEYS[2i] its readers, ARGV[2i-1] the value and ARGV[2i] the TTL (ms).
/// A reader still alive on the master's clock lives until now + TTL, and
/// the key until the last reader's deadline. Replies 1 or 0 per reader.
pub const SHARED_EXTEND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local extended = {}
for i = 1, #KEYS / 2 do
  local key, readers, value = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1]
  local held = redis.call('GET', key)
  local deadline = redis.call('ZSCORE', readers, value)
  if held and string.sub(held, 1, 7) == '\tshared' and deadline and tonumber(deadline) > now then
    redis.call('ZADD', readers, now + tonumber(ARGV[2 * i]), value)
    local last = math.floor(tonumber(redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2]))
    redis.call('PEXPIREAT', key, last)
    redis.call('PEXPIREAT', readers, last)
    extended[i] = 1
  else
    extended[i] = 0
  end
end
return extended
";

/// Releases a reader. KEYS: the lock key, the waiting mark, the readers.
/// ARGV: the value, the announcement (as ROUND's), the release channel of
/// the lock's bucket, and `PUBLISH` or `SPUBLISH`.
/// Replies 1 when the value was a live reader. When the last reader
/// leaves, the key goes, and the release is announced as ROUND announces
/// one (the waiting mark, or `always`); a writer's mark stays, so the
/// waiting writer, not a new reader, takes the free key (the writer's own
/// release clears it). Else the key lives until the last remaining
/// reader's deadline.
pub const SHARED_RELEASE: &str = r"
local held = redis.call('GET', KEYS[1])
local deadline = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not held or string.sub(held, 1, 7) ~= '\tshared' or not deadline then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2]
if last then
  last = math.floor(tonumber(last))
  redis.call('PEXPIREAT', KEYS[1], last)
  redis.call('PEXPIREAT', KEYS[3], last)
else
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    local mark = redis.call('GET', KEYS[2])
    if mark ~= false and string.sub(mark, 1, 1) ~= 'W' then
      redis.call('DEL', KEYS[2])
    end
    if mark ~= false or ARGV[2] == 'always' then
      redis.call(ARGV[4], ARGV[3], KEYS[1])
    end
  end
end
if tonumber(deadline) > now then
  return 1
end
return 0
";

/// Round 2 for a reader: while the value is a reader of the key, raise the
/// fence counter to at least ARGV[2]. KEYS: the lock key, the fence
/// counter, the readers, the bucket's marker (a missing counter is written
/// only where it exists, as by PUBLISH_FENCE; else the reply is 0).
pub const SHARED_FENCE: &str = r"
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, 7) ~= '\tshared' or not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return 0
end
local current = redis.call('GET', KEYS[2])
if current == false and redis.call('EXISTS', KEYS[4]) == 0 then
  return 0
end
if current == false or tonumber(current) < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
";

/// The shared-lock scripts of one node.
pub(super) struct SharedScripts {
    share: Script,
    extend: Script,
    release: Script,
    fence: Script,
}

impl SharedScripts {
    pub(super) fn new() -> SharedScripts {
        SharedScripts {
            share: Script::new(SHARE),
            extend: Script::new(SHARED_EXTEND),
            release: Script::new(SHARED_RELEASE),
            fence: Script::new(SHARED_FENCE),
        }
    }

    /// Every script, for loading.
    pub(super) fn all(&self) -> [&Script; 4] {
        [&self.share, &self.extend, &self.release, &self.fence]
    }
}

impl RedisNode {
    /// The readers of lock `key`: `<prefix>:{<tag>}:readers:<name>`, apart
    /// from every lock key.
    pub(super) fn readers_key(&self, key: &str) -> String {
        super::keys::beside(key, "readers:")
    }

    /// `Node::try_share`.
    pub(super) async fn share(
        &self,
        key: &str,
        value: &str,
        ttl: std::time::Duration,
    ) -> Result<Option<u64>, NodeError> {
        let (waiting, readers) = (self.waiting_key(key), self.readers_key(key));
        let (fence, marker) = (
            super::keys::of_bucket(key, "fence"),
            super::keys::of_bucket(key, "verified"),
        );
        let keys = vec![key, fence.as_str(), marker.as_str(), waiting.as_str(), readers.as_str()];
        let args = vec![Value::from(value), ttl_arg(ttl), self.waiter_tag.clone()];
        let reply = self.eval_observed(&self.shared.share, keys, args).await?;
        let answer = match reply {
            Value::Integer(n) => n,
            other => return Err(NodeError(format!("unexpected share reply {other:?}"))),
        };
        self.counted_grant(replies::locked(answer)?)
    }

    /// `Node::publish_fence` for a reader.
    pub(super) async fn publish_shared_fence(&self, key: &str, value: &str, counter: u64) -> Result<bool, NodeError> {
        let (readers, fence) = (self.readers_key(key), super::keys::of_bucket(key, "fence"));
        let marker = super::keys::of_bucket(key, "verified");
        let keys = vec![key, fence.as_str(), readers.as_str(), marker.as_str()];
        let args = vec![value.into(), Value::from(counter.to_string())];
        replies::flag(self.eval_observed(&self.shared.fence, keys, args).await?)
    }

    /// `Node::extend` for a batch with readers or permits in it: each
    /// kind in one call of its script, the answers in the batch's order.
    pub(super) async fn extend_mixed(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let class = |lock: &Extension<'_>| match (Permit::of(lock.value), Mode::of(lock.value)) {
            (Some(_), _) => 2,
            (None, Mode::Shared) => 1,
            (None, Mode::Exclusive) => 0,
        };
        let mut answers = vec![false; locks.len()];
        for kind in 0..3 {
            let at: Vec<usize> = (0..locks.len()).filter(|i| class(&locks[*i]) == kind).collect();
            if at.is_empty() {
                continue;
            }
            let group: Vec<Extension<'_>> = at.iter().map(|i| locks[*i]).collect();
            let flags = match kind {
                0 => self.extend_exclusive(&group).await?,
                1 => self.extend_shared(&group).await?,
                _ => self.extend_permits(&group).await?,
            };
            for (i, extended) in at.iter().zip(flags) {
                answers[*i] = extended;
            }
        }
        Ok(answers)
    }

    /// `Node::extend` for readers.
    async fn extend_shared(&self, locks: &[Extension<'_>]) -> Result<Vec<bool>, NodeError> {
        let readers: Vec<String> = locks.iter().map(|lock| self.readers_key(lock.key)).collect();
        let mut keys = Vec::with_capacity(locks.len() * 2);
        let mut args = Vec::with_capacity(locks.len() * 2);
        for (lock, readers) in locks.iter().zip(&readers) {
            keys.extend([lock.key, readers.as_str()]);
            args.extend([Value::from(lock.value), ttl_arg(lock.ttl)]);
        }
        let reply = self.eval_observed(&self.shared.extend, keys, args).await?;
        replies::flags(reply, locks.len())
    }

    /// `Node::unlock` for a reader: carried out in a task of its own, so
    /// it lands even when the caller stops waiting (as `Node::unlock`
    /// requires).
    pub(super) async fn unlock_shared(&self, key: &str, value: &str, announce: Announce) -> Result<bool, NodeError> {
        let when = match announce {
            Announce::No => "",
            Announce::IfWaited => "waited",
            Announce::Always => "always",
        };
        let keys = [key.to_owned(), self.waiting_key(key), self.readers_key(key)];
        let args = vec![
            Value::from(value),
            Value::from_static_str(when),
            Value::from(released_channel(key)),
            self.publish_command(),
        ];
        let (client, script) = (self.client.clone(), self.shared.release.clone());
        let release = tokio::spawn(async move {
            let call = || (keys.iter().map(String::as_str).collect(), args.clone());
            eval_script(&client, &script, call).await
        });
        let reply = release
            .await
            .unwrap_or_else(|e| Err(NodeError(format!("the release task failed: {e}"))))?;
        replies::flag(reply)
    }

    /// A lock answer as `Node::try_lock` reports it: an unverified node
    /// asks for a probe.
    pub(super) fn counted_grant(&self, locked: Locked) -> Result<Option<u64>, NodeError> {
        let unverified = match locked {
            Locked::Granted(counter) => return Ok(Some(counter)),
            Locked::Taken => return Ok(None),
            Locked::NotVerified => "UNVERIFIED node not verified since its data was lost or it started",
            Locked::Changed => "UNVERIFIED node restarted or failed over since it was verified",
            Locked::CounterFull => {
                return Err(NodeError(
                    "COUNTER the fence counter would reach 2^53 (docs/design.md#the-lock-on-one-master keeps it below); nothing granted".into(),
                ));
            }
        };
        // A master is out until the probe looked. On a cluster the refusal
        // is about one primary's buckets (its scripts refuse for the rest
        // of them too): the probe holds out that shard, the others count.
        if !self.clustered() {
            self.health.invalidate();
        }
        self.bucket_unverified.store(true, std::sync::atomic::Ordering::SeqCst);
        self.probe_wanted.notify_one();
        Err(NodeError(unverified.into()))
    }
}
