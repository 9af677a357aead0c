//! The tenants file (`auth.tokens_file`): who may call, with which bearer
//! token, and which resource prefixes each tenant may lock. Tokens are kept
//! as SHA-256 digests only, and no error message ever quotes one.

use serde::Deserialize;

/// Longest tenant name, in bytes.
pub(crate) const MAX_TENANT_BYTES: usize = 64;
/// Shortest bearer token, in bytes (about 96 bits of a random hex string).
pub(crate) const MIN_TOKEN_BYTES: usize = 24;
/// Longest bearer token, in bytes.
pub(crate) const MAX_TOKEN_BYTES: usize = 512;
/// Longest resource prefix, in bytes (a resource is at most 256).
pub(crate) const MAX_PREFIX_BYTES: usize = 256;

/// One tenant of the tenants file.
#[derive(Clone)]
pub struct TenantSpec {
    /// Its name (part of every lock key of the tenant).
    pub name: String,
    /// SHA-256 of its bearer token.
    pub token_sha256: [u8; 32],
    /// The resource prefixes it may lock (`""` allows every resource).
    pub prefixes: Vec<String>,
    /// It has the `admin` scope: it may list its locks and take them away
    /// (`redlockd.v1.Admin`).
    pub admin: bool,
    /// Its quota in each daemon (docs/operations.md#quotas).
    pub quota: QuotaSpec,
}

/// A tenant's quota in each daemon; unset is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaSpec {
    /// Locks held through the daemon at once.
    pub max_locks_held: Option<u64>,
    /// Requests waiting in the daemon's queues at once.
    pub max_waiters: Option<u64>,
    /// Open `Hold` sessions.
    pub max_sessions: Option<u64>,
    /// Acquisitions per second (a bucket of one second's worth).
    pub max_acquires_per_second: Option<f64>,
}

/// The scopes a tenant may be given.
const SCOPES: [&str; 1] = ["admin"];

/// Whether `name` can name a tenant: 1–64 bytes of `[A-Za-z0-9_.-]`.
pub(crate) fn valid_tenant_name(name: &str) -> bool {
    (1..=MAX_TENANT_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Parses a tenants file (TOML, see `config/tenants.example.toml`);
/// `token_env` entries are looked up with `env`.
///
/// # Errors
/// A message naming the tenant and the field (never a token).
pub(crate) fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<TenantSpec>, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        tenant: Vec<Entry>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        name: String,
        #[serde(default)]
        token: Option<String>,
        #[serde(default)]
        token_env: Option<String>,
        prefixes: Vec<String>,
        #[serde(default)]
        scopes: Vec<String>,
        #[serde(default)]
        quota: QuotaSpec,
    }
    // The parser's own message quotes the line, and with it maybe a
    // token: say only where the error is.
    let file: File = toml::from_str(text).map_err(|e| {
        let before = e.span().map_or(&[][..], |span| &text.as_bytes()[..span.start.min(text.len())]);
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        format!(
            "is not a valid tenants file (line {line}): expected [[tenant]] tables with name, token or token_env, prefixes, and optionally scopes and a quota table"
        )
    })?;
    if file.tenant.is_empty() {
        return Err("lists no [[tenant]]: list at least one, or unset auth.tokens_file".into());
    }
    let mut tenants = Vec::new();
    let mut names = Vec::new();
    for (i, entry) in file.tenant.into_iter().enumerate() {
        let at = format!("tenant[{i}]");
        if !valid_tenant_name(&entry.name) {
            return Err(format!(
                "{at}.name {:?} must be 1 to {MAX_TENANT_BYTES} bytes of letters, digits, '_', '.', '-'",
                entry.name
            ));
        }
        if names.contains(&entry.name) {
            return Err(format!("{at}.name {:?} is listed twice", entry.name));
        }
        let token = match (entry.token, entry.token_env) {
            (Some(token), None) => token,
            (None, Some(var)) => {
                env(&var).ok_or_else(|| format!("{at}.token_env: the environment variable {var} is not set"))?
            }
            _ => {
                return Err(format!(
                    "{at} ({}): give exactly one of token and token_env",
                    entry.name
                ));
            }
        };
        let token_ok =
            (MIN_TOKEN_BYTES..=MAX_TOKEN_BYTES).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_graphic());
        if !token_ok {
            return Err(format!(
                "{at} ({}): the token must be {MIN_TOKEN_BYTES} to {MAX_TOKEN_BYTES} printable ASCII characters without spaces",
                entry.name
            ));
        }
        if entry.prefixes.is_empty() {
            return Err(format!(
                "{at}.prefixes is empty: list the resource prefixes {} may lock (\"\" allows every resource)",
                entry.name
            ));
        }
        for (j, prefix) in entry.prefixes.iter().enumerate() {
            if prefix.len() > MAX_PREFIX_BYTES || prefix.chars().any(char::is_control) {
                return Err(format!(
                    "{at}.prefixes[{j}] must be at most {MAX_PREFIX_BYTES} bytes of printable UTF-8"
                ));
            }
        }
        for (j, scope) in entry.scopes.iter().enumerate() {
            if !SCOPES.contains(&scope.as_str()) {
                return Err(format!(
                    "{at}.scopes[{j}] {scope:?} is not a scope: the scopes are {}",
                    SCOPES.join(", ")
                ));
            }
        }
        let q = entry.quota;
        for (field, value) in [
            ("max_locks_held", q.max_locks_held),
            ("max_waiters", q.max_waiters),
            ("max_sessions", q.max_sessions),
        ] {
            if value == Some(0) {
                return Err(format!(
                    "{at}.quota.{field} must be at least 1 (leave it out for no limit)"
                ));
            }
        }
        if let Some(rate) = q.max_acquires_per_second
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(format!(
                "{at}.quota.max_acquires_per_second must be a number above 0 (leave it out for no limit)"
            ));
        }
        let token_sha256 = token_digest(&token);
        if tenants.iter().any(|t: &TenantSpec| t.token_sha256 == token_sha256) {
            return Err(format!("{at} ({}) has the same token as another tenant", entry.name));
        }
        names.push(entry.name.clone());
        tenants.push(TenantSpec {
            name: entry.name,
            token_sha256,
            prefixes: entry.prefixes,
            admin: entry.scopes.iter().any(|s| s == "admin"),
            quota: q,
        });
    }
    Ok(tenants)
}

/// SHA-256 of a bearer token.
pub(crate) fn token_digest(token: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref());
    out
}
