//! Who is calling, and what they may lock.
//!
//! With `auth.tokens_file` set, every `redlockd.v1.Lock` call carries
//! `authorization: Bearer <token>`. The token names a tenant, and the tenant
//! may only lock resources under its prefixes. The tenant comes from the
//! token, never from the request, and its name is part of every lock key,
//! so two tenants' identical resource names are different locks.
//!
//! Tokens are kept as SHA-256 digests only, and are never logged or echoed
//! back in an error.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use tonic::metadata::MetadataMap;

use crate::config::ConfigError;
use crate::locks::error::Error;

/// Longest tenant name, in bytes.
pub const MAX_TENANT_BYTES: usize = 64;
/// Shortest bearer token, in bytes (about 96 bits of a random hex string).
pub const MIN_TOKEN_BYTES: usize = 24;
/// Longest bearer token, in bytes.
pub const MAX_TOKEN_BYTES: usize = 512;
/// Longest resource prefix, in bytes (a resource is at most 256).
pub const MAX_PREFIX_BYTES: usize = 256;

/// The Redis key part of a lock, after `<key_prefix>:`.
///
/// Without tenants: `lock:<resource>`. For tenant `t`:
/// `tenant:<t>:lock:<resource>`. The two forms start differently, and a
/// tenant name holds no `:`, so the tenant and the resource can always be
/// read back: no two (tenant, resource) pairs share a key.
pub fn scoped(tenant: Option<&str>, resource: &str) -> String {
    match tenant {
        None => format!("lock:{resource}"),
        Some(tenant) => format!("tenant:{tenant}:lock:{resource}"),
    }
}

/// Whether `name` can name a tenant: 1–64 bytes of `[A-Za-z0-9_.-]`.
pub fn valid_tenant_name(name: &str) -> bool {
    (1..=MAX_TENANT_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// One tenant: a name and the resource prefixes it may lock.
pub struct Tenant {
    name: String,
    prefixes: Vec<String>,
}

impl fmt::Debug for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tenant")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Tenant {
    /// The tenant's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `resource` lies under one of its prefixes.
    pub fn allows(&self, resource: &str) -> bool {
        self.prefixes.iter().any(|p| resource.starts_with(p.as_str()))
    }
}

/// The caller of one request, as authenticated.
#[derive(Debug, Clone, Default)]
pub struct Caller(Option<Arc<Tenant>>);

impl Caller {
    /// The caller when authentication is off.
    pub fn anonymous() -> Caller {
        Caller(None)
    }

    /// The tenant, when authentication is on.
    pub fn tenant(&self) -> Option<&str> {
        self.0.as_deref().map(Tenant::name)
    }

    /// The lock name (the key after `<key_prefix>:`) of `resource` for this
    /// caller. `resource` must already be valid.
    ///
    /// # Errors
    /// `PermissionDenied` when `resource` lies outside the tenant's prefixes.
    pub fn lock_name(&self, resource: &str) -> Result<String, Error> {
        if let Some(tenant) = &self.0
            && !tenant.allows(resource)
        {
            return Err(Error::PermissionDenied(format!(
                "tenant {:?} may only lock resources starting with {}; {resource:?} is outside them",
                tenant.name,
                tenant
                    .prefixes
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(scoped(self.tenant(), resource))
    }
}

/// The tokens the daemon accepts; none means authentication is off.
#[derive(Debug, Default)]
pub struct Auth {
    tenants: Option<HashMap<[u8; 32], Arc<Tenant>>>,
}

/// The `authorization` metadata key.
const AUTHORIZATION: &str = "authorization";

impl Auth {
    /// No authentication: every caller is anonymous.
    pub fn off() -> Auth {
        Auth::default()
    }

    /// Whether requests must carry a token.
    pub fn is_on(&self) -> bool {
        self.tenants.is_some()
    }

    /// How many tenants there are.
    pub fn tenants(&self) -> usize {
        self.tenants.as_ref().map_or(0, HashMap::len)
    }

    /// Reads the tenants file at `path`; `token_env` entries are looked up
    /// with `env`.
    ///
    /// # Errors
    /// A message naming the file, the tenant and the field (never a token).
    pub fn load(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Auth, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("auth.tokens_file ({}): {e}", path.display())))?;
        Auth::parse(&text, env).map_err(|e| ConfigError(format!("auth.tokens_file ({}): {e}", path.display())))
    }

    /// Parses a tenants file (TOML, see `config/tenants.example.toml`).
    ///
    /// # Errors
    /// A message naming the tenant and the field (never a token).
    pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Auth, String> {
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
        }
        // The parser's own message quotes the line, and with it maybe a
        // token: say only where the error is.
        let file: File = toml::from_str(text).map_err(|e| {
            let before = e.span().map_or(&[][..], |span| &text.as_bytes()[..span.start.min(text.len())]);
            let line = 1 + before.iter().filter(|b| **b == b'\n').count();
            format!(
                "is not a valid tenants file (line {line}): expected [[tenant]] tables with name, token or token_env, and prefixes"
            )
        })?;
        if file.tenant.is_empty() {
            return Err("lists no [[tenant]]: list at least one, or unset auth.tokens_file".into());
        }
        let mut tenants = HashMap::new();
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
            let token_ok = (MIN_TOKEN_BYTES..=MAX_TOKEN_BYTES).contains(&token.len())
                && token.bytes().all(|b| b.is_ascii_graphic());
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
            let tenant = Arc::new(Tenant {
                name: entry.name.clone(),
                prefixes: entry.prefixes,
            });
            if tenants.insert(digest(&token), tenant).is_some() {
                return Err(format!("{at} ({}) has the same token as another tenant", entry.name));
            }
            names.push(entry.name);
        }
        Ok(Auth { tenants: Some(tenants) })
    }

    /// Who sent a request with `metadata`.
    ///
    /// # Errors
    /// `Unauthenticated` when authentication is on and the token is missing,
    /// malformed or unknown.
    pub fn caller(&self, metadata: &MetadataMap) -> Result<Caller, Error> {
        let Some(tenants) = &self.tenants else {
            return Ok(Caller::anonymous());
        };
        let header = metadata.get(AUTHORIZATION).ok_or_else(|| {
            Error::Unauthenticated("this daemon requires `authorization: Bearer <token>` metadata".into())
        })?;
        let token = header
            .to_str()
            .ok()
            .and_then(bearer)
            .ok_or_else(|| Error::Unauthenticated("the authorization metadata must be `Bearer <token>`".into()))?;
        tenants
            .get(&digest(token))
            .map(|tenant| Caller(Some(tenant.clone())))
            .ok_or_else(|| Error::Unauthenticated("the bearer token is not valid".into()))
    }
}

/// The token of an `authorization` value `Bearer <token>` (the scheme is
/// case-insensitive, RFC 6750).
pub fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn digest(token: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()).as_ref());
    out
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
