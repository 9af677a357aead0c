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
use std::sync::Arc;

use tonic::metadata::MetadataMap;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::api::error::Error;
use crate::api::peer::Peer;
#[cfg(test)]
use crate::config::tenants::{self, valid_tenant_name};
use crate::config::tenants::{TenantSpec, token_digest};
use crate::locks::quota::{self, Quota};
use crate::locks::who::Who;

/// The Redis key part of a lock, after `<key_prefix>:`.
///
/// Without tenants: `lock:<resource>`. For tenant `t`:
/// `tenant:<t>:lock:<resource>`. The two forms start differently, and a
/// tenant name holds no `:`, so the tenant and the resource can always be
/// read back: no two (tenant, resource) pairs share a key.
pub(crate) fn scoped(tenant: Option<&str>, resource: &str) -> String {
    match tenant {
        None => format!("lock:{resource}"),
        Some(tenant) => format!("tenant:{tenant}:lock:{resource}"),
    }
}

/// The lock name of election `election` for `tenant`: `election:<e>` or
/// `tenant:<t>:election:<e>` (docs/design.md#elections): apart from every
/// lock's.
pub(crate) fn scoped_election(tenant: Option<&str>, election: &str) -> String {
    match tenant {
        None => format!("election:{election}"),
        Some(tenant) => format!("tenant:{tenant}:election:{election}"),
    }
}

/// One tenant: a name, the resource prefixes it may lock, whether it may
/// call the admin service, and its quota.
pub(crate) struct Tenant {
    name: String,
    /// The name again, shared by every `Who` of the tenant.
    shared_name: Arc<str>,
    prefixes: Vec<String>,
    admin: bool,
    quota: Option<Arc<Quota>>,
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
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether `resource` lies under one of its prefixes.
    pub(crate) fn allows(&self, resource: &str) -> bool {
        self.prefixes.iter().any(|p| resource.starts_with(p.as_str()))
    }
}

/// The caller of one request, as authenticated, and where it came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caller(Option<Arc<Tenant>>, Option<Arc<Peer>>);

impl Caller {
    /// The caller when authentication is off.
    pub(crate) fn anonymous() -> Caller {
        Caller(None, None)
    }

    /// The same caller, from `peer`.
    #[must_use]
    pub(crate) fn with_peer(self, peer: Peer) -> Caller {
        Caller(self.0, Some(Arc::new(peer)))
    }

    /// The tenant, when authentication is on.
    pub(crate) fn tenant(&self) -> Option<&str> {
        self.0.as_deref().map(Tenant::name)
    }

    /// Whether the tenants file gives the caller the `admin` scope.
    pub(crate) fn is_admin(&self) -> bool {
        self.0.as_ref().is_some_and(|t| t.admin)
    }

    /// The caller as the locks see it, naming `owner`.
    pub(crate) fn who(&self, owner: &str) -> Who {
        Who {
            tenant: self.0.as_ref().map_or_else(|| Arc::from(""), |t| t.shared_name.clone()),
            owner: owner.to_owned(),
            peer: self.1.clone().map(|p| p as Arc<dyn fmt::Display + Send + Sync>),
            quota: self.0.as_ref().and_then(|t| t.quota.clone()),
        }
    }

    /// The lock name (the key after `<key_prefix>:`) of `resource` for this
    /// caller. `resource` must already be valid.
    ///
    /// # Errors
    /// `PermissionDenied` when `resource` lies outside the tenant's prefixes.
    pub(crate) fn lock_name(&self, resource: &str) -> Result<String, Error> {
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

    /// The lock name of election `election` for this caller; its tenant's
    /// prefixes apply to election names as to resources.
    ///
    /// # Errors
    /// `PermissionDenied` when the tenant may not use the name.
    pub(crate) fn election_name(&self, election: &str) -> Result<String, Error> {
        self.lock_name(election)?;
        Ok(scoped_election(self.tenant(), election))
    }
}

/// The tokens the daemon accepts; none means authentication is off.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    tenants: Option<HashMap<[u8; 32], Arc<Tenant>>>,
}

/// The `authorization` metadata key.
const AUTHORIZATION: &str = "authorization";

impl Auth {
    /// No authentication: every caller is anonymous.
    pub(crate) fn off() -> Auth {
        Auth::default()
    }

    /// Whether requests must carry a token.
    pub(crate) fn is_on(&self) -> bool {
        self.tenants.is_some()
    }

    /// How many tenants there are.
    pub(crate) fn tenants(&self) -> usize {
        self.tenants.as_ref().map_or(0, HashMap::len)
    }

    /// The tenants of a tenants file: every call must then carry one of
    /// their tokens.
    pub(crate) fn new(specs: Vec<TenantSpec>) -> Auth {
        let tenants = specs
            .into_iter()
            .map(|spec| {
                let limits = quota::Limits {
                    locks_held: spec.quota.max_locks_held,
                    waiters: spec.quota.max_waiters,
                    sessions: spec.quota.max_sessions,
                    acquires_per_second: spec.quota.max_acquires_per_second,
                };
                let quota = (limits != quota::Limits::default()).then(|| Arc::new(Quota::new(&spec.name, limits)));
                let tenant = Tenant {
                    shared_name: Arc::from(spec.name.as_str()),
                    name: spec.name,
                    prefixes: spec.prefixes,
                    admin: spec.admin,
                    quota,
                };
                (spec.token_sha256, Arc::new(tenant))
            })
            .collect();
        Auth { tenants: Some(tenants) }
    }

    /// Parses a tenants file (TOML, see `config/tenants.example.toml`).
    ///
    /// # Errors
    /// The tenant and the field (never a token).
    #[cfg(test)]
    pub(crate) fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Auth, tenants::TenantsError> {
        tenants::parse(text, env).map(Auth::new)
    }

    /// Who sent a request with `metadata`.
    ///
    /// # Errors
    /// `Unauthenticated` when authentication is on and the token is missing,
    /// malformed or unknown.
    pub(crate) fn caller(&self, metadata: &MetadataMap) -> Result<Caller, Error> {
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
            .get(&token_digest(token))
            .map(|tenant| Caller(Some(tenant.clone()), None))
            .ok_or_else(|| Error::Unauthenticated("the bearer token is not valid".into()))
    }
}

/// The interceptor in front of `redlockd.v1.Lock`: it authenticates every
/// call once and puts the `Caller` in the request's extensions, where the
/// service takes it from.
#[derive(Clone)]
pub(crate) struct Authenticate(pub(crate) Arc<Auth>);

impl Interceptor for Authenticate {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let caller = self.0.caller(request.metadata())?.with_peer(Peer::of(&request));
        request.extensions_mut().insert(caller);
        Ok(request)
    }
}

/// The token of an `authorization` value `Bearer <token>` (the scheme is
/// case-insensitive, RFC 6750).
pub(crate) fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
