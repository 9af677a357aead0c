//! The scenarios' calls and actions through the Rust client's public API
//! (clients/conformance/README.md#calls). A lease, a set member, a session
//! or a leadership given back is consumed (Rust's ownership): a later call
//! on it cannot be made, and says what the daemon would (`false`).

use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::proto::WatchResponse;
use redlockd_client::{AcquireOptions, Client, Error, HeldLock, Leader, LeaderStream, Leadership, Lease, WatchStream};
use serde_json::{Map, Value, json};

use crate::Stop;
use crate::values::{Fields, integer, meets, resolve};

pub enum Handle {
    Lease(Option<Lease>),
    Set(Vec<Option<Lease>>),
    Held(Option<HeldLock>),
    Leadership(Option<Leadership>),
    Observe(Option<LeaderStream>),
    Watch(Option<WatchStream>),
}

pub struct Run {
    pub client: Client,
    pub prefix: String,
    pub bound: HashMap<String, Fields>,
    pub handles: HashMap<String, (Handle, Option<Duration>)>,
}

pub fn fail<T>(why: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Fail(why.into()))
}

/// A client error as its scenario code and message.
fn code(verb: &str, e: &Error) -> String {
    match e {
        Error::InvalidArgument(_) => "INVALID_ARGUMENT",
        Error::FailedPrecondition(_) => "FAILED_PRECONDITION",
        Error::Unavailable { .. } => "UNAVAILABLE",
        Error::NotAcquired(_) if verb == "campaign" => "NOT_ELECTED",
        Error::NotAcquired(_) => "NOT_ACQUIRED",
        _ => "another error",
    }
    .to_owned()
}

/// A duration argument in ms; a negative one is a SKIP: a Rust `Duration`
/// cannot be negative.
pub fn ms(args: &Map<String, Value>, key: &str) -> Result<Option<Duration>, Stop> {
    match args.get(key).and_then(integer) {
        None => Ok(None),
        Some(n) if n < 0 => Err(Stop::Skip(format!("{key} {n}: std::time::Duration cannot be negative"))),
        Some(n) => Ok(Some(Duration::from_millis(n as u64))),
    }
}

pub fn text<'a>(args: &'a Map<String, Value>, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn lease_fields(l: &Lease) -> Map<String, Value> {
    let v = json!({"acquired": true, "token": l.fencing_token(), "shared": l.shared(), "permits": l.permits(),
        "slot": l.slot(), "resource": l.resource()});
    v.as_object().unwrap().clone()
}

pub fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub fn leader_fields(leader: Option<Leader>) -> Map<String, Value> {
    object(match leader {
        None => json!({"elected": false}),
        Some(l) => json!({"elected": true, "candidate": l.candidate, "term": l.term,
            "value": String::from_utf8_lossy(&l.value)}),
    })
}

pub fn change_fields(w: WatchResponse) -> Map<String, Value> {
    let kind = w.event().as_str_name().trim_start_matches("WATCH_EVENT_").to_owned();
    let mut fields = object(
        json!({"kind": kind, "held": w.held, "readers": w.readers, "permits": w.permits,
        "permits_out": w.permits_out}),
    );
    if let Some(h) = w.holder {
        fields.insert("token".into(), json!(h.fencing_token));
        fields.insert("owner".into(), json!(h.owner));
    }
    fields
}

impl Run {
    pub fn new(client: Client) -> Run {
        let prefix = format!("conformance/rust-{:08x}", fastrand::u32(..));
        Run {
            client,
            prefix,
            bound: HashMap::new(),
            handles: HashMap::new(),
        }
    }

    /// Closes what the scenario left open: sessions released, leaderships
    /// resigned, streams closed (leases are let expire).
    pub async fn close(&mut self) {
        for (_, (handle, _)) in self.handles.drain() {
            match handle {
                Handle::Held(Some(h)) => drop(h.release().await),
                Handle::Leadership(Some(l)) => drop(l.resign().await),
                _ => {}
            }
        }
    }

    pub async fn play(&mut self, steps: &[Value]) -> Result<(), Stop> {
        for (i, step) in steps.iter().enumerate() {
            let verb = step
                .get("call")
                .or_else(|| step.get("action"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            self.step(step).await.map_err(|stop| match stop {
                Stop::Fail(why) => Stop::Fail(format!("step {} ({verb}): {why}", i + 1)),
                skip => skip,
            })?;
        }
        Ok(())
    }

    pub fn resolve(&self, v: &Value) -> Value {
        resolve(v, &self.prefix, &self.bound)
    }

    async fn step(&mut self, step: &Value) -> Result<(), Stop> {
        if let Some(action) = step.get("action").and_then(Value::as_str) {
            return self.act(action, step.as_object().unwrap()).await;
        }
        let verb = step["call"].as_str().unwrap_or_default();
        let args = object(self.resolve(&step["args"]));
        let expect = step
            .get("expect")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let outcome = self.call(verb, &args, &expect).await?;
        if let Some(wanted) = step.get("expect_error") {
            let Err(e) = outcome else {
                return fail(format!("succeeded; expected {}", wanted["code"]));
            };
            let message = e.to_string();
            if code(verb, &e) != wanted["code"] {
                return fail(format!(
                    "failed as {} ({message}); expected {}",
                    code(verb, &e),
                    wanted["code"]
                ));
            }
            if let Some(field) = wanted.get("field").and_then(Value::as_str)
                && !message.contains(&format!("invalid {field}"))
            {
                return fail(format!("the error does not name {field}: {message}"));
            }
            if let Some(s) = wanted.get("message_contains") {
                let s = match self.resolve(s) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                if !message.contains(&s) {
                    return fail(format!("the error does not say {s:?}: {message}"));
                }
            }
            return Ok(());
        }
        let (fields, handle) = match outcome {
            Ok(done) => done,
            Err(e) => return fail(format!("failed: {e}")),
        };
        meets(&fields.fields, &expect, &self.prefix, &self.bound).map_err(Stop::Fail)?;
        if let Some(name) = step.get("as").and_then(Value::as_str) {
            self.bound.insert(name.to_owned(), fields);
            if let Some(handle) = handle {
                self.handles.insert(name.to_owned(), (handle, ms(&args, "ttl_ms")?));
            }
        }
        Ok(())
    }
}

/// The outcome of a call: its fields and what to bind, or the client's error.
pub type Outcome = Result<(Fields, Option<Handle>), Error>;

pub fn done(fields: Value) -> Result<Outcome, Stop> {
    Ok(Ok((
        Fields {
            fields: object(fields),
            members: vec![],
        },
        None,
    )))
}

impl Run {
    async fn call(
        &mut self,
        verb: &str,
        args: &Map<String, Value>,
        expect: &Map<String, Value>,
    ) -> Result<Outcome, Stop> {
        let c = self.client.clone();
        let permits = args.get("permits").and_then(integer).unwrap_or(0) as u32;
        let shared = args.get("shared") == Some(&Value::Bool(true));
        let key = args.get("reentrancy_key").and_then(Value::as_str);
        Ok(match verb {
            "acquire" | "acquire_many" => {
                let mut o = AcquireOptions::new().owner(text(args, "owner")).permits(permits);
                if let Some(d) = ms(args, "ttl_ms")? {
                    o = o.ttl(d);
                }
                if let Some(d) = ms(args, "wait_ms")? {
                    o = o.wait(d);
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
                if verb == "acquire" {
                    match c.acquire(text(args, "resource"), o).await {
                        Ok(None) => return done(json!({"acquired": false})),
                        Ok(Some(l)) => Ok((
                            Fields {
                                fields: lease_fields(&l),
                                members: vec![],
                            },
                            Some(Handle::Lease(Some(l))),
                        )),
                        Err(e) => Err(e),
                    }
                } else {
                    let names: Vec<String> = (args["resources"].as_array().into_iter().flatten())
                        .map(|n| n.as_str().unwrap_or_default().to_owned())
                        .collect();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    match c.acquire_many(&names, o).await {
                        Ok(None) => return done(json!({"acquired": false})),
                        Ok(Some(set)) => {
                            let members: Vec<_> = set.iter().map(lease_fields).collect();
                            let fields = json!({"acquired": true, "count": set.len(),
                                "resources": set.iter().map(Lease::resource).collect::<Vec<_>>(),
                                "tokens": set.iter().map(Lease::fencing_token).collect::<Vec<_>>()});
                            let fields = Fields {
                                fields: object(fields),
                                members,
                            };
                            Ok((fields, Some(Handle::Set(set.into_iter().map(Some).collect()))))
                        }
                        Err(e) => Err(e),
                    }
                }
            }
            "extend" => {
                let ttl = ms(args, "ttl_ms")?.or(self.ttl_of(text(args, "lease")));
                match self.lease(text(args, "lease"))? {
                    None => return done(json!({"extended": false})),
                    Some(l) => l.extend(ttl).await.map(|ok| (fields(json!({"extended": ok})), None)),
                }
            }
            "release" => match self.lease(text(args, "lease"))?.take() {
                None => return done(json!({"released": false})),
                Some(l) => l.release().await.map(|ok| (fields(json!({"released": ok})), None)),
            },
            "inspect" => c.inspect(text(args, "resource")).await.map(|r| {
                let mut f = object(json!({"held": r.held, "readers": r.readers, "permits": r.permits,
                    "permits_out": r.permits_out}));
                if let Some(h) = r.holder {
                    f.insert("token".into(), json!(h.fencing_token));
                    f.insert("owner".into(), json!(h.owner));
                }
                (
                    Fields {
                        fields: f,
                        members: vec![],
                    },
                    None,
                )
            }),
            "extend_many" | "release_many" => {
                let name = text(args, "set").to_owned();
                let ttl = ms(args, "ttl_ms")?.or(self.ttl_of(&name));
                let Some((Handle::Set(set), _)) = self.handles.get_mut(&name) else {
                    return fail(format!("no set is bound as {name}"));
                };
                let chosen: Vec<usize> = match args.get("members").and_then(Value::as_array) {
                    Some(list) => list.iter().filter_map(|m| integer(m).map(|i| i as usize)).collect(),
                    None => (0..set.len()).collect(),
                };
                // Members given back before are gone: the call cannot be all true.
                let all_there = chosen.iter().all(|&i| set.get(i).is_some_and(Option::is_some));
                let word = if verb == "extend_many" { "extended" } else { "released" };
                if verb == "extend_many" {
                    let leases = set
                        .iter_mut()
                        .enumerate()
                        .filter(|(i, _)| chosen.contains(i))
                        .filter_map(|(_, l)| l.as_mut());
                    let leases: Vec<&mut Lease> = leases.collect();
                    if leases.is_empty() {
                        return done(json!({word: false}));
                    }
                    c.extend_many(leases, ttl)
                        .await
                        .map(|ok| (fields(json!({word: ok && all_there})), None))
                } else {
                    let leases: Vec<Lease> = chosen
                        .iter()
                        .filter_map(|&i| set.get_mut(i).and_then(Option::take))
                        .collect();
                    if leases.is_empty() {
                        return done(json!({word: false}));
                    }
                    c.release_many(leases)
                        .await
                        .map(|ok| (fields(json!({word: ok && all_there})), None))
                }
            }
            _ => return self.call_more(verb, args, expect, permits, shared, key).await,
        })
    }

    fn ttl_of(&self, name: &str) -> Option<Duration> {
        let set = name.split('.').next().unwrap_or_default();
        self.handles.get(set).and_then(|(_, ttl)| *ttl)
    }

    /// The lease `name` names: `a`, or `s.1` (a set's member).
    fn lease(&mut self, name: &str) -> Result<&mut Option<Lease>, Stop> {
        let (set, member) = match name.split_once('.') {
            Some((set, i)) => (set, i.parse::<usize>().ok()),
            None => (name, None),
        };
        match (self.handles.get_mut(set), member) {
            (Some((Handle::Lease(l), _)), None) => Ok(l),
            (Some((Handle::Set(s), _)), Some(i)) if i < s.len() => Ok(&mut s[i]),
            _ => fail(format!("no lease is bound as {name}")),
        }
    }
}

pub fn fields(v: Value) -> Fields {
    Fields {
        fields: object(v),
        members: vec![],
    }
}
