//! The `redlockd.v1.Admin` service (docs/operations.md#admin): list the
//! locks a tenant holds, and take one away without breaking fencing. Only
//! for tenants with the `admin` scope; without authentication only when
//! the daemon allows it (loopback development).

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::api::auth::{Caller, scoped};
use crate::api::error::Error;
use crate::api::page_token::PageTokens;
use crate::api::proto::admin_server::Admin;
use crate::api::proto::{ForceReleaseRequest, ForceReleaseResponse, ListLocksRequest, ListLocksResponse, LockInfo};
use crate::api::request;
use crate::api::service::caller_of;
use crate::api::wire::wire_holder;
use crate::locks::Locks;
use crate::locks::who::resource_of;
use crate::redlock::{Node, Page, PageEnd};

/// The admin service over the daemon's locks.
pub(crate) struct AdminService<N> {
    locks: Arc<Locks<N>>,
    /// Authentication is on (tenants file).
    auth_on: bool,
    /// `admin.allow_unauthenticated`.
    allow_unauthenticated: bool,
    tokens: PageTokens,
}

impl<N: Node> AdminService<N> {
    pub(crate) fn new(locks: Arc<Locks<N>>, auth_on: bool, allow_unauthenticated: bool) -> AdminService<N> {
        AdminService {
            locks,
            auth_on,
            allow_unauthenticated,
            tokens: PageTokens::new(),
        }
    }

    /// Lets through a caller with the `admin` scope (or anyone, when the
    /// daemon allows unauthenticated admin calls and authentication is off).
    fn authorize(&self, caller: &Caller) -> Result<(), Error> {
        if self.auth_on {
            if caller.is_admin() {
                return Ok(());
            }
            return Err(Error::PermissionDenied(format!(
                "tenant {:?} lacks the \"admin\" scope (scopes = [\"admin\"] in the tenants file)",
                caller.tenant().unwrap_or_default()
            )));
        }
        if self.allow_unauthenticated {
            return Ok(());
        }
        Err(Error::PermissionDenied(
            "admin calls need authentication (auth.tokens_file, a tenant with scopes = [\"admin\"]); \
             for local development on a loopback address, admin.allow_unauthenticated = true"
                .into(),
        ))
    }

    async fn list_locks(&self, caller: &Caller, req: ListLocksRequest) -> Result<ListLocksResponse, Error> {
        self.authorize(caller)?;
        request::prefix(&req.prefix)?;
        let limit = request::page_size(req.page_size)?;
        let tenant = caller.tenant().unwrap_or_default();
        let page = if req.page_token.is_empty() {
            Page::first()
        } else {
            self.tokens.decode(&req.page_token, tenant, &req.prefix)?
        };
        // The listing stays inside the caller's namespace: every key it
        // scans or looks at starts with `start`.
        let start = scoped(caller.tenant(), &req.prefix);
        let nodes = self.locks.masters();
        if page.node >= nodes || page.pending.iter().any(|name| !name.starts_with(&start)) {
            return Err(Error::invalid("page_token", "does not belong to this listing"));
        }
        let (listed, end) = self.locks.list(&start, page, limit).await?;
        let locks = listed
            .iter()
            .map(|lock| LockInfo {
                resource: resource_of(&lock.name).to_owned(),
                holder: Some(wire_holder(&lock.holder)),
            })
            .collect();
        let next_page_token = match end {
            PageEnd::More(page) => self.tokens.encode(&page, tenant, &req.prefix),
            PageEnd::Done => String::new(),
        };
        Ok(ListLocksResponse { locks, next_page_token })
    }

    async fn force_release(&self, caller: &Caller, req: ForceReleaseRequest) -> Result<ForceReleaseResponse, Error> {
        self.authorize(caller)?;
        request::resource(&req.resource)?;
        request::reason(&req.reason)?;
        let name = caller.lock_name(&req.resource)?;
        let held = self.locks.force_release(&name, &caller.who(""), &req.reason).await?;
        Ok(ForceReleaseResponse {
            masters_held: held as u32,
        })
    }
}

#[tonic::async_trait]
impl<N: Node> Admin for AdminService<N> {
    async fn list_locks(&self, request: Request<ListLocksRequest>) -> Result<Response<ListLocksResponse>, Status> {
        let caller = caller_of(&request)?;
        Ok(Response::new(
            AdminService::list_locks(self, &caller, request.into_inner()).await?,
        ))
    }

    async fn force_release(
        &self,
        request: Request<ForceReleaseRequest>,
    ) -> Result<Response<ForceReleaseResponse>, Status> {
        let caller = caller_of(&request)?;
        Ok(Response::new(
            AdminService::force_release(self, &caller, request.into_inner()).await?,
        ))
    }
}
