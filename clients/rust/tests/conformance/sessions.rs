//! The scenarios' Hold sessions, elections and streams, and the actions
//! (clients/conformance/README.md#calls, #actions).

use std::process::Command;
use std::time::Duration;

use redlockd_client::{CampaignOptions, Error, HoldOptions};
use serde_json::{Map, Value, json};
use tokio::time::{Instant, timeout, timeout_at};
use tokio_stream::StreamExt;

use crate::Stop;
use crate::calls::{Handle, Outcome, Run, change_fields, done, fail, fields, leader_fields, ms, text};
use crate::values::{Fields, integer, meets};

/// How long a stream's first state may take.
const FIRST_STATE: Duration = Duration::from_secs(10);

fn term(args: &Map<String, Value>) -> u64 {
    args.get("term")
        .and_then(integer)
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(0)
}

impl Run {
    pub async fn call_more(
        &mut self,
        verb: &str,
        args: &Map<String, Value>,
        expect: &Map<String, Value>,
        permits: u32,
        shared: bool,
        key: Option<&str>,
    ) -> Result<Outcome, Stop> {
        let c = self.client.clone();
        let value = text(args, "value").to_owned();
        Ok(match verb {
            "hold" => {
                let mut o = HoldOptions::new().owner(text(args, "owner")).permits(permits);
                if let Some(d) = ms(args, "ttl_ms")? {
                    o = o.ttl(d);
                }
                if let Some(d) = ms(args, "wait_ms")? {
                    o = o.wait(d);
                }
                if let Some(d) = ms(args, "max_hold_ms")? {
                    o = o.max_hold(d);
                }
                if let Some(d) = ms(args, "lock_delay_ms")? {
                    o = o.lock_delay(d);
                }
                if shared {
                    o = o.shared();
                }
                if let Some(k) = key {
                    o = o.reentrancy_key(k);
                }
                c.hold(text(args, "resource"), o).await.map(|h| {
                    let f = fields(json!({"held": true, "token": h.fencing_token(), "slot": h.slot()}));
                    (f, Some(Handle::Held(Some(h))))
                })
            }
            "release_hold" => match self.handles.get_mut(text(args, "hold")) {
                Some((Handle::Held(h), _)) => match h.take() {
                    None => return done(json!({"released": false})),
                    // A session lost before: Rust says so with LockLost.
                    Some(h) => match h.release().await {
                        Err(Error::LockLost(_)) => Ok(false),
                        other => other,
                    }
                    .map(|ok| (fields(json!({"released": ok})), None)),
                },
                _ => return fail(format!("no session is bound as {}", text(args, "hold"))),
            },
            "campaign" => {
                let mut o = CampaignOptions::new().value(value.clone().into_bytes());
                if let Some(d) = ms(args, "ttl_ms")? {
                    o = o.ttl(d);
                }
                let campaign = c.campaign(text(args, "election"), text(args, "candidate"), o);
                // The Rust idiom for a bounded wait: a timeout around the future.
                let elected = match ms(args, "wait_ms")? {
                    Some(wait) => timeout(wait, campaign)
                        .await
                        .unwrap_or_else(|_| Err(Error::NotAcquired("the wait ran out".into()))),
                    None => campaign.await,
                };
                elected.map(|l| {
                    let f = fields(json!({"elected": true, "term": l.term(),
                        "value": String::from_utf8_lossy(&l.value())}));
                    (f, Some(Handle::Leadership(Some(l))))
                })
            }
            "leader" => c.leader(text(args, "election")).await.map(|l| {
                (
                    Fields {
                        fields: leader_fields(l),
                        members: vec![],
                    },
                    None,
                )
            }),
            "proclaim" => match args.get("leadership").and_then(Value::as_str) {
                Some(name) => match self.handles.get(name) {
                    Some((Handle::Leadership(Some(l)), _)) => {
                        l.proclaim(value).await.map(|()| (fields(json!({})), None))
                    }
                    _ => return fail(format!("no leadership is bound as {name}")),
                },
                None => {
                    (c.proclaim(text(args, "election"), term(args), value).await).map(|()| (fields(json!({})), None))
                }
            },
            "resign" => match args.get("leadership").and_then(Value::as_str) {
                Some(name) => match self.handles.get_mut(name) {
                    Some((Handle::Leadership(l), _)) => match l.take() {
                        Some(l) => l.resign().await.map(|()| (fields(json!({})), None)),
                        None => return fail(format!("{name} resigned already")),
                    },
                    _ => return fail(format!("no leadership is bound as {name}")),
                },
                None => (c.resign(text(args, "election"), term(args)).await).map(|()| (fields(json!({})), None)),
            },
            "observe" => match c.observe(text(args, "election")).await {
                Err(e) => Err(e),
                Ok(mut stream) => match timeout(FIRST_STATE, stream.next()).await {
                    Ok(Some(Ok(first))) => Ok((
                        Fields {
                            fields: leader_fields(first),
                            members: vec![],
                        },
                        Some(Handle::Observe(Some(stream))),
                    )),
                    Ok(Some(Err(e))) => Err(e),
                    _ => return fail("no first state"),
                },
            },
            "watch" => match c.watch(text(args, "resource")).await {
                Err(e) => Err(e),
                Ok(mut stream) => match timeout(FIRST_STATE, stream.next()).await {
                    Ok(Some(Ok(first))) => Ok((
                        Fields {
                            fields: change_fields(first),
                            members: vec![],
                        },
                        Some(Handle::Watch(Some(stream))),
                    )),
                    Ok(Some(Err(e))) => Err(e),
                    _ => return fail("no first state"),
                },
            },
            "next" => {
                let within = args.get("within_ms").and_then(integer).unwrap_or(10000) as u64;
                let deadline = Instant::now() + Duration::from_millis(within);
                let name = text(args, "stream").to_owned();
                let mut seen = 0;
                loop {
                    let next = match self.handles.get_mut(&name) {
                        Some((Handle::Observe(Some(s)), _)) => timeout_at(deadline, s.next())
                            .await
                            .map(|n| n.map(|r| r.map(leader_fields))),
                        Some((Handle::Watch(Some(s)), _)) => timeout_at(deadline, s.next())
                            .await
                            .map(|n| n.map(|r| r.map(change_fields))),
                        _ => return fail(format!("no open stream is bound as {name}")),
                    };
                    match next {
                        Err(_) => return fail(format!("{seen} states in {within} ms, none as expected")),
                        Ok(None) => return fail("the stream ended"),
                        Ok(Some(Err(e))) => return fail(format!("the stream failed: {e}")),
                        Ok(Some(Ok(f))) if meets(&f, expect, &self.prefix, &self.bound).is_ok() => {
                            break Ok((
                                Fields {
                                    fields: f,
                                    members: vec![],
                                },
                                None,
                            ));
                        }
                        Ok(Some(Ok(_))) => seen += 1,
                    }
                }
            }
            "close" => match self.handles.get_mut(text(args, "stream")) {
                Some((Handle::Observe(s), _)) => return done(json!({"closed": s.take().is_some()})),
                Some((Handle::Watch(s), _)) => return done(json!({"closed": s.take().is_some()})),
                _ => return fail(format!("no stream is bound as {}", text(args, "stream"))),
            },
            _ => return fail(format!("no such call {verb}")),
        })
    }

    pub async fn act(&mut self, action: &str, step: &Map<String, Value>) -> Result<(), Stop> {
        let number = |key: &str| step.get(key).and_then(integer).unwrap_or(0) as u64;
        match action {
            "sleep" => tokio::time::sleep(Duration::from_millis(number("ms"))).await,
            "kill_masters" => {
                let pids = std::env::var("REDLOCKD_DEV_MASTER_PIDS").unwrap_or_default();
                let pids: Vec<&str> = pids.split_whitespace().collect();
                let count = number("count") as usize;
                if count > pids.len() {
                    return fail(format!("REDLOCKD_DEV_MASTER_PIDS names {} masters", pids.len()));
                }
                let status = Command::new("kill").arg("-KILL").args(&pids[..count]).status();
                if !status.as_ref().is_ok_and(|s| s.success()) {
                    return fail(format!("kill -KILL {:?}: {status:?}", &pids[..count]));
                }
            }
            "expect_lost" => {
                let within = Duration::from_millis(number("within_ms"));
                let name = step
                    .get("hold")
                    .or_else(|| step.get("leadership"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let told = match self.handles.get(name) {
                    Some((Handle::Held(Some(h)), _)) => timeout(within, h.lost()).await.is_ok(),
                    Some((Handle::Leadership(Some(l)), _)) => timeout(within, l.lost()).await.is_ok(),
                    _ => return fail(format!("no session or leadership is bound as {name}")),
                };
                if !told {
                    return fail(format!("not told {name} was lost within {within:?}"));
                }
            }
            "seed_counters_above" => {
                let value: u128 = step
                    .get("value")
                    .and_then(Value::as_str)
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0);
                let counter = seed_counters(value).await.map_err(Stop::Fail)?;
                if let Some(name) = step.get("as").and_then(Value::as_str) {
                    self.bound
                        .insert(name.to_owned(), fields(json!({"counter": counter.to_string()})));
                }
            }
            _ => return fail(format!("no such action {action}")),
        }
        Ok(())
    }
}

fn redis(port: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new("redis-cli")
        .args(["-p", port])
        .args(args)
        .output()
        .map_err(|e| format!("redis-cli: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || text.starts_with("ERR") {
        return Err(format!(
            "redis-cli -p {port}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(text)
}

/// Raises every verified bucket's fence counter on every master so that
/// later tokens pass `value` (clients/conformance/README.md#actions): to
/// value/16 + 1000003, or the highest counter already there when that is
/// more (another test may have raised one near 2^53, the most a master keeps).
async fn seed_counters(value: u128) -> Result<u128, String> {
    let ports = std::env::var("REDLOCKD_DEV_MASTER_PORTS").map_err(|_| "REDLOCKD_DEV_MASTER_PORTS is not set")?;
    let mut counter = value / 16 + 1_000_003;
    for port in ports.split_whitespace() {
        let highest = redis(
            port,
            &[
                "EVAL",
                "local h = 0 for _, k in ipairs(redis.call('KEYS', 'redlockd:{*}:fence')) do h = math.max(h, tonumber(redis.call('GET', k))) end return h",
                "0",
            ],
        )?;
        counter = counter.max(highest.parse().map_err(|_| format!("the highest counter: {highest}"))?);
    }
    for port in ports.split_whitespace() {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let set = redis(
                port,
                &[
                    "EVAL",
                    "local m = redis.call('KEYS', 'redlockd:{*}:verified') for _, k in ipairs(m) do redis.call('SET', string.sub(k, 1, -1 - #'verified') .. 'fence', ARGV[1]) end return #m",
                    "0",
                    &counter.to_string(),
                ],
            )?;
            if set == "16384" {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the master on port {port} verified {set} buckets of 16384 in 10 s"
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(counter)
}
