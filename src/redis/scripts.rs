//! Every Lua script the daemon runs, in one registry
//! (docs/design.md#the-lock-on-one-master): the text of each is a file of
//! `src/redis/lua/` (what it does, its KEYS and ARGV are that file's
//! header), and the registry declares its KEYS layout and its flags and
//! computes its SHA-1 once (scripts go by `EVALSHA`, reloaded on
//! `NOSCRIPT`).
//!
//! A line `--@name` in a script is replaced by the file `name.lua`: the
//! check of the running process is written once (`run_id_from_info`), and
//! ROUND and HAND_OFF have a `--@check` that is the `INFO` check in the
//! registry's scripts and the cached check in a daemon's own variants
//! (docs/design.md#process-identity); ROUND's `--@requests` reads its
//! requests from KEYS (a master, a slot) or from ARGV (every slot of a
//! cluster primary, docs/design.md#cluster-positions).

use std::sync::LazyLock;

use super::keys;

/// The Lua files, by name.
const FILES: &[(&str, &str)] = &[
    ("round", include_str!("lua/round.lua")),
    ("round_check_by_info", include_str!("lua/round_check_by_info.lua")),
    ("round_check_by_cache", include_str!("lua/round_check_by_cache.lua")),
    ("round_requests", include_str!("lua/round_requests.lua")),
    (
        "round_requests_by_primary",
        include_str!("lua/round_requests_by_primary.lua"),
    ),
    ("hand_off", include_str!("lua/hand_off.lua")),
    ("hand_off_check_by_info", include_str!("lua/hand_off_check_by_info.lua")),
    (
        "hand_off_check_by_cache",
        include_str!("lua/hand_off_check_by_cache.lua"),
    ),
    ("run_id_from_info", include_str!("lua/run_id_from_info.lua")),
    ("seed_from_clock", include_str!("lua/seed_from_clock.lua")),
    ("publish_fence", include_str!("lua/publish_fence.lua")),
    ("extend", include_str!("lua/extend.lua")),
    ("repair", include_str!("lua/repair.lua")),
    ("inspect", include_str!("lua/inspect.lua")),
    ("views", include_str!("lua/views.lua")),
    ("force_release", include_str!("lua/force_release.lua")),
    ("share", include_str!("lua/share.lua")),
    ("shared_extend", include_str!("lua/shared_extend.lua")),
    ("shared_release", include_str!("lua/shared_release.lua")),
    ("shared_fence", include_str!("lua/shared_fence.lua")),
    ("permits", include_str!("lua/permits.lua")),
    ("permit_extend", include_str!("lua/permit_extend.lua")),
    ("set", include_str!("lua/set.lua")),
    ("bulk_get", include_str!("lua/bulk_get.lua")),
    ("bulk_repair", include_str!("lua/bulk_repair.lua")),
    ("write_record", include_str!("lua/write_record.lua")),
    ("read_record", include_str!("lua/read_record.lua")),
];

/// File `name`, its `--@…` lines expanded: `--@part` is file `part`, but
/// where `parts` names it (`("check", "round_check_by_info")`) the file
/// named there.
fn expanded(name: &str, parts: &[(&str, &str)]) -> String {
    let file = |name: &str| {
        (FILES.iter().find(|(n, _)| *n == name))
            .unwrap_or_else(|| panic!("no script file {name}.lua"))
            .1
    };
    let mut lua = String::new();
    for line in file(name).split_inclusive('\n') {
        match line.trim_end().strip_prefix("--@") {
            Some(part) => {
                let named = parts.iter().find(|(p, _)| *p == part);
                lua.push_str(&expanded(named.map_or(part, |(_, file)| file), parts));
            }
            None => lua.push_str(line),
        }
    }
    lua
}

/// What one of a lock's keys is (docs/design.md#keys): all of them carry
/// the lock's bucket, so a script on them touches one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The lock key itself.
    Lock,
    /// Its waiting mark, `<prefix>:{<tag>}:waiting:<name>`.
    Waiting,
    /// A shared lock's readers, `…:readers:<name>`.
    Readers,
    /// The number of permits of the semaphore named as the lock, `…:permits:<name>`.
    Permits,
    /// The number of permits of the semaphore whose slot the lock key is.
    PermitsOfSlot,
    /// The bucket's fence counter, `<prefix>:{<tag>}:fence`.
    Fence,
    /// The bucket's verified marker, `<prefix>:{<tag>}:verified`.
    Marker,
}

impl Role {
    /// This key of lock `key`.
    pub(super) fn of(self, key: &str) -> String {
        match self {
            Role::Lock => key.to_owned(),
            Role::Waiting => keys::beside(key, "waiting:"),
            Role::Readers => keys::beside(key, "readers:"),
            Role::Permits => keys::beside(key, "permits:"),
            Role::PermitsOfSlot => keys::permits_of_slot(key),
            Role::Fence => keys::of_bucket(key, "fence"),
            Role::Marker => keys::of_bucket(key, "verified"),
        }
    }
}

/// A script's KEYS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keys {
    /// These keys of each lock of the call, lock after lock (a call on one
    /// lock is a batch of one).
    PerLock(&'static [Role]),
    /// A list the caller makes (PERMITS: the number of permits, then every
    /// slot's key; REPAIR: each bucket's counter and marker).
    Listed,
    /// ROUND's, by each request's kind (`round_requests.lua`): a lock's key
    /// and its bucket's fence counter, a release's key.
    ByKind,
    /// In ARGV, over the slots one cluster primary serves (the bulk
    /// scripts of `cluster_probe.rs`, which declare none; ROUND by primary,
    /// which declares one only to be routed to its primary).
    InArgv,
}

/// The script-flags line a script needs (Redis 7 and later): none, or that
/// it may touch keys of several slots of its primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flags {
    None,
    CrossSlot,
    CrossSlotNoWrites,
}

/// A Lua script, its KEYS layout and flags, and its SHA-1, computed once.
#[derive(Debug, Clone)]
pub struct Script {
    /// The Lua source, for `SCRIPT LOAD`.
    pub lua: String,
    /// Its SHA-1, for `EVALSHA`.
    pub sha: String,
    pub(super) keys: Keys,
    pub(super) flags: Flags,
}

impl Script {
    fn declared(lua: String, keys: Keys, flags: Flags) -> Script {
        let lua = planted_call(lua);
        Script {
            sha: fred::util::sha1_hash(&lua),
            lua,
            keys,
            flags,
        }
    }

    /// The keys of one lock for a `Keys::PerLock` script.
    pub(super) fn keys_of(&self, key: &str) -> Vec<String> {
        match self.keys {
            Keys::PerLock(roles) => roles.iter().map(|role| role.of(key)).collect(),
            Keys::ByKind | Keys::Listed | Keys::InArgv => vec![key.to_owned()],
        }
    }

    /// The text a server of major version `major` runs (by `EVAL`): with
    /// the flags line from Redis 7 on; before 7 a flags line does not
    /// compile, and a script may touch any slot of its node. (A script
    /// that goes by SHA has its flags line in its text: `Scripts::by_primary`.)
    pub(super) fn text_for(&self, major: u32) -> String {
        let flags = match self.flags {
            Flags::None => return self.lua.clone(),
            _ if self.lua.starts_with("#!") => return self.lua.clone(),
            Flags::CrossSlot => "allow-cross-slot-keys",
            Flags::CrossSlotNoWrites => "allow-cross-slot-keys,no-writes",
        };
        if major >= 7 {
            format!("#!lua flags={flags}\n{}", self.lua)
        } else {
            self.lua.clone()
        }
    }
}

/// `lua` itself; but in a debug build with `REDLOCKD_TEST_PLANTED_CALL`
/// set, a script with keys (the grant script among them) first calls
/// `EXISTS` on its first key: a harmless extra call that
/// scripts/check-budget --self-test plants to show the budget failing
/// (docs/performance.md#the-budget). Release builds ignore the variable.
fn planted_call(lua: String) -> String {
    if cfg!(debug_assertions) && std::env::var_os("REDLOCKD_TEST_PLANTED_CALL").is_some() && lua.contains("KEYS[") {
        // After a `#!lua flags=...` line, which must come first.
        let at = if lua.starts_with("#!") {
            lua.find('\n').map_or(lua.len(), |i| i + 1)
        } else {
            0
        };
        return format!("{}redis.call('EXISTS', KEYS[1])\n{}", &lua[..at], &lua[at..]);
    }
    lua
}

use Role::{Fence, Lock, Marker, Permits, PermitsOfSlot, Readers, Waiting};

/// Every script, once per process.
pub struct Scripts {
    /// Round-1 locks and releases, a batch per call (`batch.rs`).
    pub round: Script,
    /// ROUND over every slot of one cluster primary (Redis 7 and later;
    /// `batch::Primaries`), its flags line in its text: it goes by SHA,
    /// loaded when first called (a 6.2 primary could not compile it).
    pub by_primary: Script,
    pub hand_off: Script,
    /// Round 2 of an exclusive lock.
    pub publish_fence: Script,
    pub extend: Script,
    pub repair: Script,
    pub inspect: Script,
    pub views: Script,
    pub force_release: Script,
    pub share: Script,
    pub shared_extend: Script,
    pub shared_release: Script,
    pub shared_fence: Script,
    pub permits: Script,
    pub permit_extend: Script,
    pub set: Script,
    /// Read and repair every bucket of a cluster primary (`cluster_probe.rs`).
    pub bulk_get: Script,
    pub bulk_repair: Script,
    /// An election's record, written while its lock holds the writer's
    /// value, and read with the lock (`election.rs`).
    pub write_record: Script,
    pub read_record: Script,
}

/// The registry.
pub static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| {
    let per_lock = |name: &str, roles: &'static [Role]| {
        let check = format!("{name}_check_by_info");
        let check = FILES.iter().any(|(n, _)| *n == check).then_some(check.as_str());
        let parts = [("check", check.unwrap_or("")), ("requests", "round_requests")];
        Script::declared(expanded(name, &parts), Keys::PerLock(roles), Flags::None)
    };
    let other = |name: &str, keys: Keys, flags: Flags| Script::declared(expanded(name, &[]), keys, flags);
    Scripts {
        round: Script {
            keys: Keys::ByKind,
            ..per_lock("round", &[])
        },
        by_primary: by_primary("", "round_check_by_info"),
        hand_off: per_lock("hand_off", &[Lock, Fence, Marker, Waiting]),
        publish_fence: per_lock("publish_fence", &[Lock, Fence, Marker]),
        extend: per_lock("extend", &[Lock]),
        repair: other("repair", Keys::Listed, Flags::None),
        inspect: per_lock("inspect", &[Lock, Fence, Readers, Permits]),
        views: per_lock("views", &[Lock]),
        force_release: per_lock("force_release", &[Lock, Fence, Marker, Waiting]),
        share: per_lock("share", &[Lock, Fence, Marker, Waiting, Readers]),
        shared_extend: per_lock("shared_extend", &[Lock, Readers]),
        shared_release: per_lock("shared_release", &[Lock, Waiting, Readers]),
        shared_fence: per_lock("shared_fence", &[Lock, Fence, Readers, Marker]),
        permits: other("permits", Keys::Listed, Flags::None),
        permit_extend: per_lock("permit_extend", &[Lock, PermitsOfSlot]),
        set: per_lock("set", &[Lock, Waiting, Fence, Marker]),
        bulk_get: other("bulk_get", Keys::InArgv, Flags::CrossSlotNoWrites),
        bulk_repair: other("bulk_repair", Keys::InArgv, Flags::CrossSlot),
        write_record: other("write_record", Keys::Listed, Flags::None),
        read_record: other("read_record", Keys::Listed, Flags::None),
    }
});

impl Scripts {
    /// Every script a lock connection calls by SHA, for loading (the bulk
    /// scripts go by `EVAL`, the cached variants by `proof.rs`).
    pub(super) fn by_sha(&self) -> [&Script; 17] {
        [
            &self.round,
            &self.hand_off,
            &self.publish_fence,
            &self.extend,
            &self.repair,
            &self.inspect,
            &self.views,
            &self.force_release,
            &self.share,
            &self.shared_extend,
            &self.shared_release,
            &self.shared_fence,
            &self.permits,
            &self.permit_extend,
            &self.set,
            &self.write_record,
            &self.read_record,
        ]
    }
}

/// ROUND over every slot of a cluster primary: the flags line, then
/// `first` (a cached variant's nonce line), then ROUND with `check`.
fn by_primary(first: &str, check: &str) -> Script {
    let parts = [("check", check), ("requests", "round_requests_by_primary")];
    let lua = format!(
        "#!lua flags=allow-cross-slot-keys\n{first}{}",
        expanded("round", &parts)
    );
    Script::declared(lua, Keys::InArgv, Flags::CrossSlot)
}

/// ROUND and HAND_OFF for a master whose script cache proves its process
/// (docs/design.md#process-identity): the same scripts with the cached
/// check instead of the `INFO` one, and a first line naming this daemon
/// (`nonce`, random), so their text, and their SHA-1, are this daemon's
/// alone. Loaded only into a process this daemon verified; anywhere else
/// `EVALSHA` of them answers `NOSCRIPT` (Redis 7 neither persists nor
/// replicates its script cache), and `NOSCRIPT` then means "unverified":
/// the batch goes again with the `INFO` check, never "load and retry".
pub fn cached_variants(nonce: &str) -> (Script, Script) {
    let first = format!("-- redlockd {nonce}: loaded only into a process this daemon verified\n");
    let variant = |name: &str, like: &Script| {
        let check = format!("{name}_check_by_cache");
        let lua = first.clone() + &expanded(name, &[("check", &check), ("requests", "round_requests")]);
        Script::declared(lua, like.keys, like.flags)
    };
    (variant("round", &SCRIPTS.round), variant("hand_off", &SCRIPTS.hand_off))
}

/// `cached_variants`' ROUND over every slot of a cluster primary, for the
/// same `nonce`.
pub fn cached_variant_by_primary(nonce: &str) -> Script {
    let first = format!("-- redlockd {nonce}: loaded only into a process this daemon verified\n");
    by_primary(&first, "round_check_by_cache")
}

/// The pub/sub channel on which releases of the locks of the bucket of
/// lock key `key` are announced: `<prefix>:{<tag>}:released`
/// (docs/design.md#waiting).
pub fn released_channel(key: &str) -> String {
    keys::of_bucket(key, "released")
}

#[cfg(test)]
#[path = "scripts_tests.rs"]
mod tests;
