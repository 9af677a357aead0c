//! The Redis ACL the daemon needs (docs/configuration.md#redis-acl),
//! declared once: every command it sends a master, as an ACL rule names it
//! (`container|subcommand` for `CONFIG GET` and the like), and the rule for
//! a key prefix. The tests (`acl_tests.rs`) derive the commands from the
//! Lua scripts and the calls in this folder and fail when this list, the
//! docs' copies of the rule or deploy/'s differ from what is used.

/// Which positions need a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needed {
    /// Standalone masters and cluster positions.
    Everywhere,
    /// Only positions served by a Redis Cluster
    /// (docs/design.md#cluster-positions).
    OnClusters,
}

/// Every command the daemon sends, inside its scripts (ACLs apply there
/// too) and outside them, and whether only cluster positions need it.
pub const COMMANDS: &[(&str, Needed)] = &[
    // The scripts: locks, fence counters, markers, holder records.
    ("get", Needed::Everywhere),
    ("set", Needed::Everywhere),
    ("del", Needed::Everywhere),
    ("exists", Needed::Everywhere),
    ("mget", Needed::Everywhere),
    ("incr", Needed::Everywhere),
    ("decr", Needed::Everywhere),
    ("pexpire", Needed::Everywhere),
    ("pexpireat", Needed::Everywhere),
    ("pttl", Needed::Everywhere),
    ("time", Needed::Everywhere),
    ("info", Needed::Everywhere),
    // The scripts of shared locks: readers in a sorted set.
    ("zadd", Needed::Everywhere),
    ("zscore", Needed::Everywhere),
    ("zrange", Needed::Everywhere),
    ("zrem", Needed::Everywhere),
    ("zremrangebyscore", Needed::Everywhere),
    ("zcount", Needed::Everywhere),
    // Releases announced, and heard.
    ("publish", Needed::Everywhere),
    ("subscribe", Needed::Everywhere),
    ("unsubscribe", Needed::Everywhere),
    // Scripts by SHA, loaded by the probe and on NOSCRIPT; flushed only
    // when a master restarted while the cached variants were loaded.
    ("evalsha", Needed::Everywhere),
    ("script|load", Needed::Everywhere),
    ("script|flush", Needed::Everywhere),
    // The monitor and Admin/ListLocks.
    ("config|get", Needed::Everywhere),
    ("scan", Needed::Everywhere),
    // fred, on every new connection (denied, it is harmless but fills the
    // ACL log).
    ("client|id", Needed::Everywhere),
    // Cluster positions: sharded release channels, the slot map, fred's
    // check of the cluster's state on every connection, redirections
    // while a slot migrates, repair's bulk scripts (by EVAL, once), and
    // ROUND by primary's check of the node it runs on.
    ("spublish", Needed::OnClusters),
    ("ssubscribe", Needed::OnClusters),
    ("sunsubscribe", Needed::OnClusters),
    ("cluster|slots", Needed::OnClusters),
    ("cluster|info", Needed::OnClusters),
    ("asking", Needed::OnClusters),
    ("eval", Needed::OnClusters),
    ("cluster|myid", Needed::OnClusters),
];

/// The commands of the rule for standalone masters (`clusters` false), or
/// for cluster positions, in `COMMANDS`' order.
pub fn commands(clusters: bool) -> impl Iterator<Item = &'static str> {
    (COMMANDS.iter())
        .filter(move |(_, needed)| clusters || *needed == Needed::Everywhere)
        .map(|(command, _)| *command)
}

/// The permissions of the daemon's user for `key_prefix` (no password):
/// its keys, its channels and exactly its commands, as one line of an ACL
/// file or `ACL SETUSER` takes them after the user's name.
pub fn rule(key_prefix: &str, clusters: bool) -> String {
    let mut rule = format!("~{key_prefix}:* &{key_prefix}:*");
    for command in commands(clusters) {
        rule.push_str(" +");
        rule.push_str(command);
    }
    rule
}

#[cfg(test)]
#[path = "acl_tests.rs"]
mod tests;
