//! Config loading and validation tests.
use super::*;

const FIVE: &str =
    "redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3,redis://127.0.0.1:4,redis://127.0.0.1:5";

fn load(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let mut env: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    env.entry("REDLOCKD__REDIS__NODES".into())
        .or_insert_with(|| FIVE.into());
    Config::load(None, Some(env))
}

#[test]
fn the_defaults_with_five_nodes_are_valid() {
    let config = load(&[]).unwrap();
    assert_eq!(config.redis.nodes.len(), 5);
    assert_eq!(config.redis.node_timeout, Duration::from_millis(50));
    assert_eq!(config.lock.drift_factor, 0.01);
}

#[test]
fn the_defaults_alone_refuse_to_start_without_nodes() {
    let err = Config::load(None, Some(HashMap::new())).unwrap_err();
    assert!(err.0.contains("redis.nodes"), "{err}");
}

#[test]
fn a_cluster_positions_seeds_survive_the_environments_commas() {
    let nodes = "redis-cluster://a:1,a:2,a:3,redis://b:1,rediss-cluster://u:p@c:1,c:2";
    let config = load(&[("REDLOCKD__REDIS__NODES", nodes)]).unwrap();
    assert_eq!(
        config.redis.nodes,
        [
            "redis-cluster://a:1,a:2,a:3",
            "redis://b:1",
            "rediss-cluster://u:p@c:1,c:2"
        ]
    );
    // A seed with no cluster before it is not a URL.
    let err = load(&[("REDLOCKD__REDIS__NODES", "redis://a:1,a:2,redis://b:1")]).unwrap_err();
    assert!(err.0.contains("redis.nodes[1] must start with"), "{err}");
}

#[test]
fn environment_variables_override_the_defaults() {
    let config = load(&[("REDLOCKD__LOCK__MAX_TTL", "2m"), ("REDLOCKD__LOG__FORMAT", "json")]).unwrap();
    assert_eq!(config.lock.max_ttl, Duration::from_secs(120));
    assert_eq!(config.log.format, LogFormat::Json);
}

#[test]
fn a_file_overrides_the_defaults_and_the_environment_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redlockd.toml");
    std::fs::write(&path, "[lock]\nmax_wait = \"5s\"\ndefault_ttl = \"3s\"\n").unwrap();
    let env = HashMap::from([
        ("REDLOCKD__REDIS__NODES".to_string(), FIVE.to_string()),
        ("REDLOCKD__LOCK__DEFAULT_TTL".to_string(), "4s".to_string()),
    ]);
    let config = Config::load(Some(&path), Some(env)).unwrap();
    assert_eq!(config.lock.max_wait, Duration::from_secs(5));
    assert_eq!(config.lock.default_ttl, Duration::from_secs(4));
}

#[test]
fn each_broken_rule_names_its_setting() {
    let cases = [
        ("REDLOCKD__REDIS__NODES", "redis://a:1,redis://b:2", "redis.nodes"),
        (
            "REDLOCKD__REDIS__NODES",
            "redis://a:1,http://b:2,redis://c:3",
            "redis.nodes[1]",
        ),
        ("REDLOCKD__REDIS__NODE_TIMEOUT", "200ms", "redis.node_timeout"),
        ("REDLOCKD__REDIS__KEY_PREFIX", "a b", "redis.key_prefix"),
        ("REDLOCKD__LOCK__MIN_TTL", "2m", "lock.min_ttl"),
        ("REDLOCKD__LOCK__DEFAULT_TTL", "2h", "lock.default_ttl"),
        ("REDLOCKD__LOCK__MAX_WAIT", "2h", "lock.max_wait"),
        ("REDLOCKD__LOCK__DRIFT_FACTOR", "0.9", "lock.drift_factor"),
        ("REDLOCKD__LOCK__RETRY_DELAY_MAX", "1ms", "lock.retry_delay_max"),
        ("REDLOCKD__LOCK__MIN_VALIDITY", "1s", "lock.min_validity"),
        ("REDLOCKD__LOG__FORMAT", "xml", "format"),
        ("REDLOCKD__LOCK__MAX_TTL", "soon", "max_ttl"),
    ];
    for (key, value, named) in cases {
        let err = load(&[(key, value)]).expect_err(key);
        assert!(err.0.contains(named), "{key}={value}: {err} does not name {named}");
    }
}

#[test]
fn server_tls_limits_and_tokens_are_checked_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let not_pem = not_pem.to_str().unwrap();
    let tenants = dir.path().join("tenants.toml");
    std::fs::write(
        &tenants,
        "[[tenant]]\nname = \"a\"\ntoken = \"tiny\"\nprefixes = [\"\"]\n",
    )
    .unwrap();
    let tenants = tenants.to_str().unwrap();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("REDLOCKD__SERVER__MAX_MESSAGE_SIZE", "100")],
            "server.max_message_size (100)",
        ),
        (
            &[("REDLOCKD__SERVER__MAX_CONCURRENT_STREAMS", "0")],
            "server.max_concurrent_streams",
        ),
        (
            &[("REDLOCKD__SERVER__MAX_REQUESTS_PER_CONNECTION", "0")],
            "server.max_requests_per_connection",
        ),
        (
            &[("REDLOCKD__SERVER__WORKER_THREADS", "65")],
            "server.worker_threads (65) must lie within [0, 64]",
        ),
        (&[("REDLOCKD__SERVER__TLS_CERT_FILE", not_pem)], "set together"),
        (
            &[("REDLOCKD__SERVER__TLS_CLIENT_CA_FILE", not_pem)],
            "needs server.tls_cert_file",
        ),
        (
            &[
                ("REDLOCKD__SERVER__TLS_CERT_FILE", not_pem),
                ("REDLOCKD__SERVER__TLS_KEY_FILE", not_pem),
            ],
            "server.tls_cert_file",
        ),
        (
            &[
                ("REDLOCKD__SERVER__TLS_CERT_FILE", "/nonexistent.pem"),
                ("REDLOCKD__SERVER__TLS_KEY_FILE", not_pem),
            ],
            "server.tls_cert_file (/nonexistent.pem) is not a readable file",
        ),
        (
            &[("REDLOCKD__AUTH__TOKENS_FILE", "/nonexistent.toml")],
            "auth.tokens_file",
        ),
        (
            &[("REDLOCKD__AUTH__TOKENS_FILE", tenants)],
            "tenant[0] (a): the token must be",
        ),
    ];
    for (pairs, wanted) in cases {
        let err = load(pairs).unwrap_err();
        assert!(err.0.contains(wanted), "{pairs:?}: {err}");
    }
    let config = load(&[]).unwrap();
    assert_eq!(config.server.max_message_size, 4096);
    assert!(config.auth.tokens_file.is_none());
    assert!(config.files.tenants.is_none());
}

#[test]
fn worker_threads_are_read_before_the_rest_and_zero_means_half_the_cores() {
    let env = |v: &str| {
        Some(HashMap::from([(
            "REDLOCKD__SERVER__WORKER_THREADS".to_string(),
            v.to_string(),
        )]))
    };
    // No redis.nodes: only this setting is read.
    assert_eq!(Config::workers(None, env("3")), Ok(3));
    let half = std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1));
    assert_eq!(Config::workers(None, env("0")), Ok(half));
    assert_eq!(Config::workers(None, Some(HashMap::new())), Ok(half), "the default");
    let err = Config::workers(None, env("65")).unwrap_err();
    assert!(err.0.contains("server.worker_threads (65)"), "{err}");
    assert!(Config::workers(None, env("-1")).is_err());
}

#[test]
fn the_watch_period_and_the_longest_lock_delay_are_bounded() {
    let config = load(&[]).unwrap();
    assert_eq!(config.lock.watch_period, Duration::from_secs(1));
    assert_eq!(config.lock.max_lock_delay, Duration::from_secs(60));
    let err = load(&[("REDLOCKD__LOCK__WATCH_PERIOD", "0s")]).unwrap_err();
    assert!(err.0.contains("lock.watch_period"), "{err}");
    let err = load(&[("REDLOCKD__LOCK__MAX_LOCK_DELAY", "2h")]).unwrap_err();
    assert!(err.0.contains("lock.max_lock_delay"), "{err}");
}

#[test]
fn the_status_page_is_off_by_default_and_open_only_on_loopback_without_tenants() {
    let config = load(&[]).unwrap();
    assert!(!config.status_page.enabled);
    let on = ("REDLOCKD__STATUS_PAGE__ENABLED", "true");
    assert!(load(&[on]).unwrap().status_page.enabled);
    let err = load(&[on, ("REDLOCKD__METRICS__LISTEN", "0.0.0.0:9420")]).unwrap_err();
    assert!(err.0.contains("status_page.enabled without auth.tokens_file"), "{err}");
    assert!(err.0.contains("0.0.0.0:9420"), "{err}");
    // Off, any address is fine; a typo is named.
    load(&[("REDLOCKD__METRICS__LISTEN", "0.0.0.0:9420")]).unwrap();
    let err = load(&[("REDLOCKD__STATUS_PAGE__ENABLED", "yes please")]).unwrap_err();
    assert!(err.0.contains("enabled"), "{err}");
}
