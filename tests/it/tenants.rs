//! Tenants (docs/security.md): without a valid bearer token every call is
//! unauthenticated, a resource outside a tenant's prefixes is denied, and
//! two tenants' locks of one name are two keys.

use crate::support;

use fred::prelude::{ClientLike, KeysInterface};
use redlockd_client::Pipeline;
use redlockd_client::proto::lock_client::LockClient;
use redlockd_client::proto::{ExtendRequest, InspectRequest, ReleaseRequest};
use support::hold::hold_start;
use support::tenants::{ALPHA, BETA};
use support::*;
use tonic::Code;
use tonic::transport::Channel;

/// A daemon with two tenants: `alpha` may lock `shared/` and `alpha/`,
/// `beta` only `shared/`.
async fn daemon_with_tenants(cluster: &Cluster, dir: &std::path::Path) -> Daemon {
    let file = dir.join("tenants.toml");
    std::fs::write(
        &file,
        format!(
            "[[tenant]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nprefixes = [\"shared/\", \"alpha/\"]\n\n\
             [[tenant]]\nname = \"beta\"\ntoken = \"{BETA}\"\nprefixes = [\"shared/\"]\n"
        ),
    )
    .unwrap();
    Daemon::start_with(env_with(
        cluster,
        &[("REDLOCKD__AUTH__TOKENS_FILE", file.to_string_lossy().into_owned())],
    ))
    .await
}

/// `message` with `authorization: Bearer <token>`.
fn authed<T>(message: T, token: &str) -> tonic::Request<T> {
    maybe_authed(message, Some(token))
}

/// `message`, with a bearer token if one is given.
fn maybe_authed<T>(message: T, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

/// The status a Hold stream ends with before it grants anything.
async fn hold_error(client: &mut LockClient<Channel>, request: tonic::Request<()>, resource: &str) -> Code {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(hold_start(resource)).await.unwrap();
    let mut stream_request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    *stream_request.metadata_mut() = request.metadata().clone();
    let outcome = match client.hold(stream_request).await {
        Err(status) => status.code(),
        Ok(response) => match response.into_inner().message().await {
            Err(status) => status.code(),
            Ok(message) => panic!("the session went on: {message:?}"),
        },
    };
    drop(tx);
    outcome
}

#[tokio::test]
async fn calls_without_a_valid_token_are_unauthenticated_on_every_method() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    let mut client = daemon.client().await;
    let value = "0".repeat(40);
    for token in [None, Some("not-a-known-token-0123456789abcdef")] {
        let acquire = client
            .acquire(maybe_authed(acquire_req("shared/x", 2.0, 0.0), token))
            .await
            .unwrap_err();
        assert_eq!(acquire.code(), Code::Unauthenticated, "{acquire:?}");
        assert!(!acquire.message().contains(ALPHA));
        let extend = ExtendRequest {
            resource: "shared/x".into(),
            value: value.clone(),
            ttl: secs(2.0),
        };
        assert_eq!(
            client.extend(maybe_authed(extend, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        let release = ReleaseRequest {
            resource: "shared/x".into(),
            value: value.clone(),
        };
        assert_eq!(
            client.release(maybe_authed(release, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        let inspect = InspectRequest {
            resource: "shared/x".into(),
        };
        assert_eq!(
            client.inspect(maybe_authed(inspect, token)).await.unwrap_err().code(),
            Code::Unauthenticated
        );
        assert_eq!(
            hold_error(&mut client, maybe_authed((), token), "shared/x").await,
            Code::Unauthenticated
        );
        let pipeline = Pipeline::open_with(client.clone(), maybe_authed((), token).into_parts().0).await;
        assert_eq!(pipeline.err().map(|s| s.code()), Some(Code::Unauthenticated));
    }
    // Health stays open for the kubelet's probes.
    assert_eq!(daemon.health("").await, ServingStatus::Serving);
    daemon.stop().await;
}

#[tokio::test]
async fn resources_outside_a_tenants_prefixes_are_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    let mut client = daemon.client().await;
    let denied = client
        .acquire(authed(acquire_req("alpha/x", 2.0, 0.0), BETA))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("\"shared/\""), "{}", denied.message());
    let inspect = InspectRequest {
        resource: "alpha/x".into(),
    };
    assert_eq!(
        client.inspect(authed(inspect, BETA)).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert_eq!(
        hold_error(&mut client, authed((), BETA), "alpha/x").await,
        Code::PermissionDenied
    );
    // On a Pipeline stream, the same call is refused the same way.
    let beta = Pipeline::open_with(client.clone(), authed((), BETA).into_parts().0)
        .await
        .unwrap();
    let denied = beta.acquire(acquire_req("alpha/x", 2.0, 0.0)).await.unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("\"shared/\""), "{}", denied.message());
    assert!(beta.acquire(acquire_req("shared/y", 2.0, 0.0)).await.unwrap().acquired);
    // Alpha may, and its lease names the resource as asked.
    let granted = client
        .acquire(authed(acquire_req("alpha/x", 2.0, 0.0), ALPHA))
        .await
        .unwrap()
        .into_inner();
    let lease = granted.lease.expect("alpha may lock alpha/");
    assert_eq!(lease.resource, "alpha/x");
    // Beta cannot release it, even with the value: it is not beta's lock.
    let steal = ReleaseRequest {
        resource: "alpha/x".into(),
        value: lease.value.clone(),
    };
    assert_eq!(
        client.release(authed(steal.clone(), BETA)).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert!(
        client
            .release(authed(steal, ALPHA))
            .await
            .unwrap()
            .into_inner()
            .released
    );
    daemon.stop().await;
}

async fn take_shared(client: &mut LockClient<Channel>, token: &str) -> redlockd_client::proto::AcquireResponse {
    let request = authed(acquire_req("shared/orders", 5.0, 0.0), token);
    client.acquire(request).await.unwrap().into_inner()
}

#[tokio::test]
async fn two_tenants_with_the_same_resource_name_hold_different_locks() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(5);
    let daemon = daemon_with_tenants(&cluster, dir.path()).await;
    // Master 0 is read below: it must have been in the rounds.
    daemon.until_usable(1).await;
    let mut client = daemon.client().await;
    let alpha = take_shared(&mut client, ALPHA).await;
    let beta = take_shared(&mut client, BETA).await;
    assert!(alpha.acquired && beta.acquired, "{alpha:?} {beta:?}");
    // Each tenant's own lock still excludes that tenant.
    assert!(
        !take_shared(&mut client, ALPHA).await.acquired,
        "alpha took its own lock twice"
    );
    let admin = cluster.admin(0).await;
    for tenant in ["alpha", "beta"] {
        let key = support::keys::lock(&format!("tenant:{tenant}:lock:shared/orders"));
        let exists: i64 = admin.exists(key.as_str()).await.unwrap();
        assert_eq!(exists, 1, "{key} is missing");
    }
    let exists: i64 = admin.exists(support::keys::of("shared/orders")).await.unwrap();
    assert_eq!(exists, 0, "an un-namespaced key was written");
    // Beta presenting alpha's value on the same name touches only its own key.
    let alpha_lease = alpha.lease.unwrap();
    let cross = ReleaseRequest {
        resource: "shared/orders".into(),
        value: alpha_lease.value.clone(),
    };
    assert!(!client.release(authed(cross, BETA)).await.unwrap().into_inner().released);
    let exists: i64 = admin
        .exists(support::keys::lock("tenant:alpha:lock:shared/orders"))
        .await
        .unwrap();
    assert_eq!(exists, 1, "beta released alpha's lock");
    let _ = admin.quit().await;
    daemon.stop().await;
}
