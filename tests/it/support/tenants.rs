//! Tenants for the admin, quota and audit tests: `alpha` (admin, every
//! resource) and `beta` (not admin, with a quota of the test's choosing),
//! and the requests they send.

use std::collections::HashMap;
use std::time::Duration;

use redlockd_client::proto::AcquireRequest;
use redlockd_client::proto::admin_client::AdminClient;
use tonic::Request;
use tonic::transport::Channel;

use super::{Cluster, Daemon, test_env};

pub const ALPHA: &str = "alpha-token-0123456789abcdef0123";
pub const BETA: &str = "beta-token-0123456789abcdef01234";

pub fn dur(ms: u64) -> Option<prost_types::Duration> {
    Some(redlockd_client::wire_duration(Duration::from_millis(ms)))
}

pub fn authed<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

/// A daemon with tenant `alpha` (admin, every resource) and `beta` (not
/// admin, with `beta_quota` as its quota table).
pub async fn daemon_with_tenants(cluster: &Cluster, dir: &std::path::Path, beta_quota: &str) -> Daemon {
    Daemon::start_with(tenants_env(cluster, dir, beta_quota)).await
}

/// The environment of `daemon_with_tenants`, for a test to add to.
pub fn tenants_env(cluster: &Cluster, dir: &std::path::Path, beta_quota: &str) -> HashMap<String, String> {
    let file = dir.join("tenants.toml");
    std::fs::write(
        &file,
        format!(
            "[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"\"]\nscopes = [\"admin\"]\n\n\
             [[tenant]]\nname = \"beta\"\ntoken = \"{BETA}\"\nprefixes = [\"\"]\n{beta_quota}\n"
        ),
    )
    .unwrap();
    let mut env = test_env(cluster);
    env.insert(
        "REDLOCKD__AUTH__TOKENS_FILE".into(),
        file.to_string_lossy().into_owned(),
    );
    env
}

pub async fn admin(daemon: &Daemon) -> AdminClient<Channel> {
    AdminClient::new(daemon.channel().await)
}

pub fn acquire(resource: &str, ttl_ms: u64, owner: &str) -> AcquireRequest {
    AcquireRequest {
        resource: resource.into(),
        ttl: dur(ttl_ms),
        owner: owner.into(),
        ..AcquireRequest::default()
    }
}
