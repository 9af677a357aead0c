//! The ACL rule against what the daemon sends, and against every copy of
//! it in the docs and deploy/. What is sent is read from the sources of
//! this folder (the only one that speaks to Redis: scripts/check-layers):
//! every `redis.call`/`redis.pcall` of the Lua, every fred method and
//! custom command called, and what fred sends on its own.

use std::collections::BTreeSet;
use std::path::Path;

use super::{COMMANDS, Needed, commands, rule};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Commands an ACL names with their subcommand (`config|get`).
const CONTAINERS: &[&str] = &[
    "acl", "client", "cluster", "command", "config", "function", "latency", "memory", "module", "object", "pubsub",
    "script", "slowlog", "xinfo",
];

/// A script that calls the command its caller names (`redis.call(publish,
/// …)`): the expression, and what it may be. All three are how releases
/// are announced, `RedisNode::publish_command`: `PUBLISH`, or `SPUBLISH`
/// on a cluster.
const NAMED_BY_CALLER: &[(&str, &[&str])] = &[
    ("publish", &["publish", "spublish"]),
    ("ARGV[2]", &["publish", "spublish"]),
    ("ARGV[4]", &["publish", "spublish"]),
];

/// fred's methods that send a command, as the daemon may call them.
const FRED_METHODS: &[(&str, &str)] = &[
    ("evalsha", "evalsha"),
    ("eval", "eval"),
    ("script_load", "script|load"),
    ("script_load_cluster", "script|load"),
    ("script_flush", "script|flush"),
    ("script_flush_cluster", "script|flush"),
    ("script_exists", "script|exists"),
    ("info", "info"),
    ("get", "get"),
    ("mget", "mget"),
    ("set", "set"),
    ("del", "del"),
    ("exists", "exists"),
    ("incr", "incr"),
    ("decr", "decr"),
    ("expire", "expire"),
    ("pexpire", "pexpire"),
    ("pttl", "pttl"),
    ("keys", "keys"),
    ("scan", "scan"),
    ("scan_page", "scan"),
    ("scan_cluster", "scan"),
    ("publish", "publish"),
    ("spublish", "spublish"),
    ("subscribe", "subscribe"),
    ("unsubscribe", "unsubscribe"),
    ("ssubscribe", "ssubscribe"),
    ("sunsubscribe", "sunsubscribe"),
    ("psubscribe", "psubscribe"),
    ("punsubscribe", "punsubscribe"),
    ("ping", "ping"),
    ("sync_cluster", "cluster|slots"),
    ("cluster_slots", "cluster|slots"),
    ("cluster_info", "cluster|info"),
    ("cluster_nodes", "cluster|nodes"),
    ("config_get", "config|get"),
    ("config_set", "config|set"),
    ("client_id", "client|id"),
    ("flushall", "flushall"),
];

/// What fred sends on its own: the command, and where vendor/fred/src
/// sends it. (`AUTH`, `HELLO` and `QUIT` need no permission.)
const FRED_SENDS: &[(&str, &str, &str)] = &[
    // Every connection reads its id and the server's version...
    ("client|id", "protocol/connection.rs", "CommandKind::ClientID"),
    (
        "info",
        "protocol/connection.rs",
        "CommandKind::Info, vec![InfoKind::Server",
    ),
    // ...and on a cluster checks `cluster_state:ok`.
    ("cluster|info", "protocol/connection.rs", "CommandKind::ClusterInfo"),
    // The slot map, and an `ASK` redirection followed while a slot moves.
    ("cluster|slots", "router/clustered.rs", "CommandKind::ClusterSlots"),
    ("asking", "router/utils.rs", "Command::new_asking"),
];

/// The sources of src/redis/ but this test and the declaration: name, text.
fn sources() -> Vec<(String, String)> {
    let folder = |path: &str| std::fs::read_dir(Path::new(ROOT).join(path)).unwrap();
    let mut files: Vec<(String, String)> = (folder("src/redis").chain(folder("src/redis/lua")))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs" || e == "lua"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .filter(|(name, _)| name != "acl.rs" && name != "acl_tests.rs")
        .collect();
    files.sort();
    assert!(
        files.iter().any(|(name, _)| name == "scripts.rs") && files.iter().any(|(name, _)| name == "round.lua"),
        "the scripts were not found"
    );
    files
}

/// A quoted string at the start of `text`, and the text after it.
fn literal(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = text[1..].find(quote)? + 1;
    Some((&text[1..end], &text[end + 1..]))
}

/// `name` (and the subcommand at the start of `rest`, for a container) as
/// an ACL names it.
fn acl_name(name: &str, rest: &str) -> String {
    let name = name.to_lowercase();
    if !CONTAINERS.contains(&name.as_str()) {
        return name;
    }
    let rest = rest.trim_start().trim_start_matches(',').trim_start();
    match literal(rest) {
        Some((sub, _)) => format!("{name}|{}", sub.to_lowercase()),
        None => panic!("{name} without a literal subcommand: {rest:.40}"),
    }
}

/// The commands the Lua in `text` calls: `Ok(command)` for a literal
/// name, `Err(expression)` for one its caller names.
fn script_calls(text: &str) -> Vec<Result<String, String>> {
    let mut calls = Vec::new();
    for marker in ["redis.call(", "redis.pcall("] {
        for (at, _) in text.match_indices(marker) {
            let rest = text[at + marker.len()..].trim_start();
            calls.push(match literal(rest) {
                Some((name, after)) => Ok(acl_name(name, after)),
                None => Err(rest[..rest.find([',', ')']).unwrap_or(rest.len())].trim().to_owned()),
            });
        }
    }
    calls
}

/// The fred methods `text` calls on a client (not `self.method(…)`, the
/// node's own), as commands.
fn method_calls(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (method, command) in FRED_METHODS {
        for call in [format!(".{method}("), format!(".{method}::<")] {
            for (at, _) in text.match_indices(&call) {
                let before = text[..at].trim_end();
                let receiver = &before[before
                    .rfind(|c: char| !c.is_alphanumeric() && c != '_')
                    .map_or(0, |i| i + 1)..];
                if receiver != "self" {
                    found.insert((*command).to_owned());
                }
            }
        }
    }
    found
}

/// The custom commands (`CustomCommand::new_static("NAME", …)`) of every
/// source. A container's subcommand is the first literal of the next
/// `vec![…]`, in the same function or at the calls of a helper that sends
/// it (`proof::script_command`).
fn custom_commands(files: &[(String, String)]) -> BTreeSet<String> {
    const MARK: &str = "CustomCommand::new_static(";
    let mut found = BTreeSet::new();
    for (name, text) in files {
        for (at, _) in text.match_indices(MARK) {
            let (command, _) = literal(&text[at + MARK.len()..]).unwrap_or_else(|| panic!("{name}: {MARK} a literal"));
            if !CONTAINERS.contains(&command.to_lowercase().as_str()) {
                found.insert(command.to_lowercase());
                continue;
            }
            let body_end = text[at..].find("\n}").map_or(text.len(), |e| at + e);
            if let Some(v) = text[at..body_end].find("vec![") {
                found.insert(acl_name(command, &text[at + v + 5..]));
                continue;
            }
            // A helper: its callers name the subcommand.
            let helper = text[..at].rsplit_once("fn ").map(|(_, f)| f).unwrap_or_default();
            let helper = &helper[..helper.find('(').unwrap_or(0)];
            let mut subcommands = 0;
            for (_, other) in files {
                for (call, _) in other.match_indices(&format!("{helper}(")) {
                    let window = &other[call..(call + 200).min(other.len())];
                    if let (false, Some(v)) = (other[..call].ends_with("fn "), window.find("vec![")) {
                        found.insert(acl_name(command, &window[v + 5..]));
                        subcommands += 1;
                    }
                }
            }
            assert!(
                subcommands > 0,
                "{name}: cannot tell the subcommands of {command} (in fn {helper})"
            );
        }
    }
    found
}

/// Every command the daemon sends, from its sources and fred's.
fn sent() -> BTreeSet<String> {
    let files = sources();
    let mut sent = BTreeSet::new();
    for (name, text) in &files {
        for call in script_calls(text) {
            match call {
                Ok(command) => {
                    sent.insert(command);
                }
                Err(expression) => {
                    let (_, may_be) = (NAMED_BY_CALLER.iter().find(|(e, _)| *e == expression)).unwrap_or_else(|| {
                        panic!("{name}: a script calls the command named by `{expression}`: add what it may be to NAMED_BY_CALLER")
                    });
                    sent.extend(may_be.iter().map(|c| (*c).to_owned()));
                }
            }
        }
        sent.extend(method_calls(text));
    }
    let all: String = files.iter().map(|(_, text)| text.as_str()).collect();
    assert!(
        all.contains("\"PUBLISH\"") && all.contains("\"SPUBLISH\""),
        "how releases are announced changed"
    );
    sent.extend(custom_commands(&files));
    for (command, file, witness) in FRED_SENDS {
        let source = std::fs::read_to_string(Path::new(ROOT).join("vendor/fred/src").join(file)).unwrap();
        if source.contains(witness) {
            sent.insert((*command).to_owned());
        }
    }
    sent
}

#[test]
fn the_rule_names_every_command_the_daemon_sends_and_no_other() {
    let sent = sent();
    let declared: BTreeSet<String> = COMMANDS.iter().map(|(c, _)| (*c).to_owned()).collect();
    let missing: Vec<&String> = sent.difference(&declared).collect();
    let extra: Vec<&String> = declared.difference(&sent).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "src/redis/acl.rs COMMANDS is not what the daemon sends: missing {missing:?} (sent, not in the rule); \
         extra {extra:?} (in the rule, never sent)"
    );
    assert_eq!(declared.len(), COMMANDS.len(), "a command is declared twice");
}

#[test]
fn the_scripts_are_read_with_their_literal_and_caller_named_commands() {
    let lua = "local a = redis.call('GET', k)\nredis.pcall(\"CONFIG\", 'GET', x)\nredis.call(ARGV[2], c, k)";
    let calls = script_calls(lua);
    assert_eq!(calls.len(), 3, "{calls:?}");
    for want in [
        Ok("get".to_owned()),
        Ok("config|get".to_owned()),
        Err("ARGV[2]".to_owned()),
    ] {
        assert!(calls.contains(&want), "{want:?} in {calls:?}");
    }
    let rust = "self.probe_client\n    .script_load::<String, _>(lua)\nself.eval(x)\nnode.info(None)";
    assert_eq!(method_calls(rust), ["info", "script|load"].map(str::to_owned).into());
    assert!(sent().contains("zremrangebyscore") && sent().contains("cluster|info"));
}

/// The permission words of a rule line (`~…`, `&…`, `+…`, `-…`).
fn words(line: &str) -> BTreeSet<String> {
    (line.split(|c: char| c.is_whitespace() || c == '`'))
        .filter(|w| {
            w.len() > 1 && (w.starts_with('~') || w.starts_with('&') || w.starts_with('+') || w.starts_with('-'))
        })
        .map(str::to_owned)
        .collect()
}

/// Every copy of a rule outside the code: lines of the docs and deploy/
/// with three or more `+command` words. Each must be the whole rule for
/// its positions; docs/configuration.md must give both, deploy/ the
/// standalone one.
#[test]
fn every_copy_of_the_rule_in_the_docs_and_deploy_is_the_declared_one() {
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "deploy", "clients"] {
        let mut stack = vec![root.join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() && !["node_modules", "target", ".venv"].contains(&name.as_str()) {
                    stack.push(path);
                } else if [".md", ".yaml", ".yml", ".sh", ".conf", ".acl"]
                    .iter()
                    .any(|e| name.ends_with(e))
                {
                    files.push(path);
                }
            }
        }
    }
    let mut problems = Vec::new();
    let mut copies: Vec<(String, bool)> = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let file = path.strip_prefix(root).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            let words = words(line);
            if words.iter().filter(|w| w.starts_with('+')).count() < 3 {
                continue;
            }
            let prefix = words
                .iter()
                .find_map(|w| w.strip_prefix('~'))
                .and_then(|k| k.strip_suffix(":*"));
            let Some(prefix) = prefix else {
                problems.push(format!("{file}:{}: a rule without its keys (`~<prefix>:*`)", n + 1));
                continue;
            };
            let clusters = words.contains("+spublish");
            let want = self::words(&rule(prefix, clusters));
            let missing: Vec<&String> = want.difference(&words).collect();
            let extra: Vec<&String> = words.difference(&want).collect();
            if !missing.is_empty() || !extra.is_empty() {
                problems.push(format!(
                    "{file}:{}: the {} rule misses {missing:?} and adds {extra:?} (src/redis/acl.rs declares it)",
                    n + 1,
                    if clusters { "cluster" } else { "standalone" }
                ));
            }
            copies.push((file.clone(), clusters));
        }
    }
    for (file, clusters) in [
        ("docs/configuration.md", false),
        ("docs/configuration.md", true),
        ("deploy/redis-masters.yaml", false),
    ] {
        if !copies.contains(&(file.to_owned(), clusters)) {
            problems.push(format!(
                "{file} gives no {} rule",
                if clusters { "cluster" } else { "standalone" }
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// docs/configuration.md#redis-acl explains each command in a table: the
/// first column names them (`CONFIG GET`), exactly the declared ones; the
/// second says which positions need them (`all` or `clusters`).
#[test]
fn the_docs_table_explains_every_declared_command() {
    let docs = std::fs::read_to_string(Path::new(ROOT).join("docs/configuration.md")).unwrap();
    let section = docs
        .split("## Redis ACL")
        .nth(1)
        .expect("docs/configuration.md#redis-acl");
    let rows = (section.lines())
        .skip_while(|l| !l.starts_with("| command |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'));
    let mut named = BTreeSet::new();
    let mut problems = Vec::new();
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (first, positions) = (cells.get(1).copied().unwrap_or_default(), cells.get(2).copied());
        for name in first.split('`').skip(1).step_by(2) {
            let command = name.to_lowercase().replace(' ', "|");
            let needed = COMMANDS.iter().find(|(c, _)| *c == command).map(|(_, n)| *n);
            let said = match positions {
                Some("all") => Some(Needed::Everywhere),
                Some("clusters") => Some(Needed::OnClusters),
                _ => None,
            };
            if needed.is_some() && needed != said {
                problems.push(format!(
                    "{name}: the table says {positions:?}, src/redis/acl.rs {needed:?}"
                ));
            }
            named.insert(command);
        }
    }
    let declared: BTreeSet<String> = COMMANDS.iter().map(|(c, _)| (*c).to_owned()).collect();
    let missing: Vec<&String> = declared.difference(&named).collect();
    let extra: Vec<&String> = named.difference(&declared).collect();
    if !missing.is_empty() || !extra.is_empty() {
        problems.push(format!("the table of commands misses {missing:?} and names {extra:?}"));
    }
    assert!(
        problems.is_empty(),
        "docs/configuration.md#redis-acl: {}",
        problems.join("; ")
    );
    assert_eq!(commands(true).count(), COMMANDS.len());
}
