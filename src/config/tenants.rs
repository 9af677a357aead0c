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

/// What is wrong with a tenants file: the tenant (`index` in the file,
/// and its name once known) and the field. Never a token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum TenantsError {
    /// Not TOML of the expected shape (the parser's own message is not
    /// kept: it quotes the line, and with it maybe a token).
    #[error(
        "is not a valid tenants file (line {line}): expected [[tenant]] tables with name, token or token_env, prefixes, and optionally scopes and a quota table"
    )]
    NotATenantsFile {
        /// The line the parser stopped at.
        line: usize,
    },
    /// No `[[tenant]]` at all.
    #[error("lists no [[tenant]]: list at least one, or unset auth.tokens_file")]
    NoTenants,
    /// A name that cannot name a tenant.
    #[error("tenant[{index}].name {name:?} must be 1 to {MAX_TENANT_BYTES} bytes of letters, digits, '_', '.', '-'")]
    InvalidName {
        /// The tenant's place in the file.
        index: usize,
        /// The name given.
        name: String,
    },
    /// A name an earlier tenant has.
    #[error("tenant[{index}].name {name:?} is listed twice")]
    NameTwice {
        /// The tenant's place in the file.
        index: usize,
        /// The name given.
        name: String,
    },
    /// `token_env` names a variable that is not set.
    #[error("tenant[{index}].token_env: the environment variable {variable} is not set")]
    TokenEnvUnset {
        /// The tenant's place in the file.
        index: usize,
        /// The variable named.
        variable: String,
    },
    /// Both or neither of `token` and `token_env`.
    #[error("tenant[{index}] ({name}): give exactly one of token and token_env")]
    TokenSource {
        /// The tenant's place in the file.
        index: usize,
        /// The tenant.
        name: String,
    },
    /// A token too short, too long or not printable.
    #[error(
        "tenant[{index}] ({name}): the token must be {MIN_TOKEN_BYTES} to {MAX_TOKEN_BYTES} printable ASCII characters without spaces"
    )]
    InvalidToken {
        /// The tenant's place in the file.
        index: usize,
        /// The tenant.
        name: String,
    },
    /// No resource prefixes.
    #[error(
        "tenant[{index}].prefixes is empty: list the resource prefixes {name} may lock (\"\" allows every resource)"
    )]
    NoPrefixes {
        /// The tenant's place in the file.
        index: usize,
        /// The tenant.
        name: String,
    },
    /// A prefix too long or with control characters.
    #[error("tenant[{index}].prefixes[{prefix}] must be at most {MAX_PREFIX_BYTES} bytes of printable UTF-8")]
    InvalidPrefix {
        /// The tenant's place in the file.
        index: usize,
        /// The prefix's place in its list.
        prefix: usize,
    },
    /// A scope that does not exist.
    #[error("tenant[{index}].scopes[{position}] {scope:?} is not a scope: the scopes are {}", SCOPES.join(", "))]
    UnknownScope {
        /// The tenant's place in the file.
        index: usize,
        /// The scope's place in its list.
        position: usize,
        /// The scope given.
        scope: String,
    },
    /// A quota of 0 locks, waiters or sessions.
    #[error("tenant[{index}].quota.{field} must be at least 1 (leave it out for no limit)")]
    ZeroQuota {
        /// The tenant's place in the file.
        index: usize,
        /// `max_locks_held`, `max_waiters` or `max_sessions`.
        field: &'static str,
    },
    /// A rate that is not a number above 0.
    #[error("tenant[{index}].quota.max_acquires_per_second must be a number above 0 (leave it out for no limit)")]
    InvalidRate {
        /// The tenant's place in the file.
        index: usize,
    },
    /// Two tenants with one token: a caller could not be told apart.
    #[error("tenant[{index}] ({name}) has the same token as another tenant")]
    SameToken {
        /// The tenant's place in the file.
        index: usize,
        /// The tenant.
        name: String,
    },
}

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
/// The tenant and the field (never a token).
pub(crate) fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<TenantSpec>, TenantsError> {
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
        let before = e
            .span()
            .map_or(&[][..], |span| &text.as_bytes()[..span.start.min(text.len())]);
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        TenantsError::NotATenantsFile { line }
    })?;
    if file.tenant.is_empty() {
        return Err(TenantsError::NoTenants);
    }
    let mut tenants = Vec::new();
    let mut names = Vec::new();
    for (index, entry) in file.tenant.into_iter().enumerate() {
        if !valid_tenant_name(&entry.name) {
            return Err(TenantsError::InvalidName {
                index,
                name: entry.name,
            });
        }
        if names.contains(&entry.name) {
            return Err(TenantsError::NameTwice {
                index,
                name: entry.name,
            });
        }
        let token = match (entry.token, entry.token_env) {
            (Some(token), None) => token,
            (None, Some(variable)) => env(&variable).ok_or(TenantsError::TokenEnvUnset { index, variable })?,
            _ => {
                return Err(TenantsError::TokenSource {
                    index,
                    name: entry.name,
                });
            }
        };
        let token_ok =
            (MIN_TOKEN_BYTES..=MAX_TOKEN_BYTES).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_graphic());
        if !token_ok {
            return Err(TenantsError::InvalidToken {
                index,
                name: entry.name,
            });
        }
        if entry.prefixes.is_empty() {
            return Err(TenantsError::NoPrefixes {
                index,
                name: entry.name,
            });
        }
        for (prefix, text) in entry.prefixes.iter().enumerate() {
            if text.len() > MAX_PREFIX_BYTES || text.chars().any(char::is_control) {
                return Err(TenantsError::InvalidPrefix { index, prefix });
            }
        }
        for (position, scope) in entry.scopes.iter().enumerate() {
            if !SCOPES.contains(&scope.as_str()) {
                return Err(TenantsError::UnknownScope {
                    index,
                    position,
                    scope: scope.clone(),
                });
            }
        }
        let q = entry.quota;
        for (field, value) in [
            ("max_locks_held", q.max_locks_held),
            ("max_waiters", q.max_waiters),
            ("max_sessions", q.max_sessions),
        ] {
            if value == Some(0) {
                return Err(TenantsError::ZeroQuota { index, field });
            }
        }
        if let Some(rate) = q.max_acquires_per_second
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(TenantsError::InvalidRate { index });
        }
        let token_sha256 = token_digest(&token);
        if tenants.iter().any(|t: &TenantSpec| t.token_sha256 == token_sha256) {
            return Err(TenantsError::SameToken {
                index,
                name: entry.name,
            });
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
