//! The route table (docs/http.md): names with slashes, the verb picking the
//! call, wrong methods and unknown paths, every template parsed.

use super::*;

fn found(method: Method, path: &str) -> Option<(&'static str, Option<String>)> {
    match find(UNARY, &method, path) {
        Found::Route(route, variable) => Some((route.rpc, variable.map(str::to_owned))),
        _ => None,
    }
}

#[test]
fn a_resource_may_hold_slashes_and_the_verb_picks_the_call() {
    assert_eq!(
        found(Method::POST, "/v1/locks/orders/42:acquire"),
        Some(("redlockd.v1.Lock/Acquire", Some("orders/42".into())))
    );
    assert_eq!(
        found(Method::GET, "/v1/locks/orders/42"),
        Some(("redlockd.v1.Lock/Inspect", Some("orders/42".into())))
    );
    assert_eq!(
        found(Method::POST, "/v1/locks:acquireMany"),
        Some(("redlockd.v1.Lock/AcquireMany", None))
    );
    assert_eq!(
        found(Method::GET, "/v1/elections/jobs/a%3Aresign"),
        Some(("redlockd.v1.Election/Leader", Some("jobs/a%3Aresign".into())))
    );
}

#[test]
fn a_wrong_method_names_the_allowed_ones_and_an_unknown_path_nothing() {
    assert_eq!(
        find(UNARY, &Method::GET, "/v1/locks/x:acquire"),
        Found::WrongMethod(vec![Method::POST])
    );
    // An unknown verb is part of the name: an Inspect's path, not a POST's.
    assert_eq!(
        find(UNARY, &Method::POST, "/v1/locks/x:frobnicate"),
        Found::WrongMethod(vec![Method::GET])
    );
    // Not a verb of any route: part of the name.
    assert_eq!(
        found(Method::GET, "/v1/locks/tenant:orders"),
        Some(("redlockd.v1.Lock/Inspect", Some("tenant:orders".into())))
    );
    assert_eq!(find(UNARY, &Method::POST, "/v1/locks/:acquire"), Found::Nothing);
    assert_eq!(find(UNARY, &Method::GET, "/v2/locks/x"), Found::Nothing);
    assert_eq!(find(UNARY, &Method::GET, "/v1/admin/locks/extra"), Found::Nothing);
}

#[test]
fn a_stream_verb_is_its_route_and_never_part_of_a_name() {
    let found = |method: Method, path: &str| match find(&ALL, &method, path) {
        Found::Route(route, variable) => Some((route.rpc, route.is_stream(), variable.map(str::to_owned))),
        _ => None,
    };
    assert_eq!(
        found(Method::POST, "/v1/locks/orders/42:hold"),
        Some(("redlockd.v1.Lock/Hold", true, Some("orders/42".into())))
    );
    assert_eq!(
        found(Method::GET, "/v1/locks/orders/42:watch"),
        Some(("redlockd.v1.Lock/Watch", true, Some("orders/42".into())))
    );
    assert_eq!(
        found(Method::GET, "/v1/elections/jobs/a:observe"),
        Some(("redlockd.v1.Election/Observe", true, Some("jobs/a".into())))
    );
    assert_eq!(
        found(Method::GET, "/v1/locks/orders/42"),
        Some(("redlockd.v1.Lock/Inspect", false, Some("orders/42".into())))
    );
    assert_eq!(
        find(&ALL, &Method::GET, "/v1/locks/x:hold"),
        Found::WrongMethod(vec![Method::POST])
    );
    assert_eq!(
        find(&ALL, &Method::POST, "/v1/elections/e:observe"),
        Found::WrongMethod(vec![Method::GET])
    );
}

#[test]
fn every_template_parses_into_prefix_variable_and_verb() {
    let acquire = UNARY[0].parts();
    assert_eq!(
        (acquire.prefix, acquire.variable, acquire.verb),
        ("/v1/locks/", Some("resource"), Some("acquire"))
    );
    let many = UNARY[4].parts();
    assert_eq!(
        (many.prefix, many.variable, many.verb),
        ("/v1/locks", None, Some("acquireMany"))
    );
    let list = UNARY[7].parts();
    assert_eq!((list.prefix, list.variable, list.verb), ("/v1/admin/locks", None, None));
}
