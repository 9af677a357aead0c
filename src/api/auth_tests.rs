use proptest::prelude::*;
use tonic::Code;
use tonic::metadata::MetadataMap;

use super::*;
use crate::api::status;

const BILLING: &str = "billing-0123456789abcdef0123";
const SEARCH: &str = "search-0123456789abcdef012345";

fn no_env(_: &str) -> Option<String> {
    None
}

fn two_tenants() -> Auth {
    let file = format!(
        r#"
        [[tenant]]
        name = "billing"
        token = "{BILLING}"
        prefixes = ["orders/", "invoices/"]

        [[tenant]]
        name = "search"
        token_env = "SEARCH_TOKEN"
        prefixes = [""]
        "#
    );
    Auth::parse(&file, &|var| (var == "SEARCH_TOKEN").then(|| SEARCH.to_owned())).unwrap()
}

fn with_token(value: &str) -> MetadataMap {
    let mut metadata = MetadataMap::new();
    metadata.insert("authorization", value.parse().unwrap());
    metadata
}

fn code(result: Result<impl std::fmt::Debug, Error>) -> Code {
    status::code(&result.unwrap_err())
}

#[test]
fn tokens_name_their_tenant_from_the_file_or_the_environment() {
    let auth = two_tenants();
    assert!(auth.is_on());
    assert_eq!(auth.tenants(), 2);
    let billing = auth.caller(&with_token(&format!("Bearer {BILLING}"))).unwrap();
    assert_eq!(billing.tenant(), Some("billing"));
    let search = auth.caller(&with_token(&format!("bearer {SEARCH}"))).unwrap();
    assert_eq!(search.tenant(), Some("search"));
}

#[test]
fn missing_malformed_and_unknown_tokens_are_unauthenticated() {
    let auth = two_tenants();
    assert_eq!(code(auth.caller(&MetadataMap::new())), Code::Unauthenticated);
    assert_eq!(code(auth.caller(&with_token(BILLING))), Code::Unauthenticated);
    assert_eq!(
        code(auth.caller(&with_token(&format!("Basic {BILLING}")))),
        Code::Unauthenticated
    );
    let unknown = auth
        .caller(&with_token("Bearer not-a-token-of-anyone-here"))
        .unwrap_err();
    assert_eq!(status::code(&unknown), Code::Unauthenticated);
    // A near miss is no better than a stranger, and never echoed back.
    let near = format!("Bearer {}x", &BILLING[..BILLING.len() - 1]);
    let error = auth.caller(&with_token(&near)).unwrap_err().to_string();
    assert!(!error.contains(&BILLING[..10]), "{error}");
}

#[test]
fn resources_outside_the_prefixes_are_permission_denied() {
    let auth = two_tenants();
    let billing = auth.caller(&with_token(&format!("Bearer {BILLING}"))).unwrap();
    assert_eq!(billing.lock_name("orders/42").unwrap(), "tenant:billing:lock:orders/42");
    assert_eq!(
        billing.lock_name("invoices/7").unwrap(),
        "tenant:billing:lock:invoices/7"
    );
    let denied = billing.lock_name("users/1").unwrap_err();
    assert_eq!(status::code(&denied), Code::PermissionDenied);
    assert!(denied.to_string().contains("\"orders/\""), "{denied}");
    // An empty prefix allows everything.
    let search = auth.caller(&with_token(&format!("Bearer {SEARCH}"))).unwrap();
    assert_eq!(search.lock_name("users/1").unwrap(), "tenant:search:lock:users/1");
}

#[test]
fn without_a_tokens_file_every_caller_is_anonymous_and_keys_are_unchanged() {
    let auth = Auth::off();
    let caller = auth.caller(&MetadataMap::new()).unwrap();
    assert_eq!(caller.tenant(), None);
    assert_eq!(caller.lock_name("orders/42").unwrap(), "lock:orders/42");
}

#[test]
fn bad_tenants_files_are_refused_naming_the_field_and_never_the_token() {
    let secret = "s3cret-token-value-0123456789";
    let cases = [
        ("", "no [[tenant]]"),
        (
            "[[tenant]]\nname = \"a\"\nprefixes = [\"x\"]\n",
            "exactly one of token and token_env",
        ),
        (
            "[[tenant]]\nname = \"a:b\"\ntoken = \"s3cret-token-value-0123456789\"\nprefixes = [\"x\"]\n",
            "tenant[0].name",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken = \"short\"\nprefixes = [\"x\"]\n",
            "24 to 512",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken = \"s3cret-token-value-0123456789\"\nprefixes = []\n",
            "tenant[0].prefixes is empty",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken_env = \"NOPE\"\nprefixes = [\"x\"]\n",
            "NOPE is not set",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken = \"s3cret-token-value-0123456789\"\nprefixes = [\"x\"]\n\
             [[tenant]]\nname = \"b\"\ntoken = \"s3cret-token-value-0123456789\"\nprefixes = [\"y\"]\n",
            "same token",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken = \"s3cret-token-value-0123456789\"\nprefixes = [\"x\"]\n\
             [[tenant]]\nname = \"a\"\ntoken = \"another-token-value-0123456789\"\nprefixes = [\"y\"]\n",
            "listed twice",
        ),
        (
            "[[tenant]]\nname = \"a\"\ntoken = \"s3cret-token-value-0123456789\nprefixes = [1]\n",
            "line 3",
        ),
    ];
    for (file, wanted) in cases {
        let error = Auth::parse(file, &no_env).unwrap_err().to_string();
        assert!(error.contains(wanted), "{file:?}: {error}");
        assert!(!error.contains(secret), "the token leaked: {error}");
    }
}

#[test]
fn bearer_values_are_read_as_rfc_6750_says() {
    assert_eq!(bearer("Bearer abc"), Some("abc"));
    assert_eq!(bearer("BEARER abc "), Some("abc"));
    assert_eq!(bearer("Bearer "), None);
    assert_eq!(bearer("Bearerabc"), None);
    assert_eq!(bearer("Token abc"), None);
}

fn tenant_name() -> impl Strategy<Value = Option<String>> {
    prop_oneof![Just(None), "[A-Za-z0-9_.-]{1,64}".prop_map(Some)]
}

fn resource() -> impl Strategy<Value = String> {
    // Printable, and full of the separators a careless encoding would trip
    // on.
    "([a-z:/]|tenant:|lock:|:lock:|\\PC){1,40}"
}

/// Reads a lock name back into (tenant, resource): that this exists is what
/// makes `scoped` injective.
fn unscoped(name: &str) -> Option<(Option<String>, String)> {
    if let Some(resource) = name.strip_prefix("lock:") {
        return Some((None, resource.to_owned()));
    }
    let rest = name.strip_prefix("tenant:")?;
    let (tenant, rest) = rest.split_once(':')?;
    Some((Some(tenant.to_owned()), rest.strip_prefix("lock:")?.to_owned()))
}

proptest! {
    /// Every lock name reads back into the tenant and resource it was made
    /// from.
    #[test]
    fn lock_names_read_back(pair in (tenant_name(), resource())) {
        prop_assume!(pair.0.as_deref().is_none_or(valid_tenant_name));
        prop_assert_eq!(unscoped(&scoped(pair.0.as_deref(), &pair.1)), Some(pair));
    }

    /// Distinct (tenant, resource) pairs never share a lock key, whatever
    /// the resource names contain.
    #[test]
    fn lock_names_are_injective(a in (tenant_name(), resource()), b in (tenant_name(), resource())) {
        prop_assume!(a.0.as_deref().is_none_or(valid_tenant_name));
        prop_assume!(b.0.as_deref().is_none_or(valid_tenant_name));
        let name_a = scoped(a.0.as_deref(), &a.1);
        let name_b = scoped(b.0.as_deref(), &b.1);
        prop_assert_eq!(name_a == name_b, a == b, "{:?} and {:?} both give {:?}", a, b, name_a);
    }

    /// The same resource name under two tenants (or none) is two locks.
    #[test]
    fn tenants_never_share_a_resource(t in "[a-z0-9_.-]{1,64}", u in "[a-z0-9_.-]{1,64}", r in resource()) {
        prop_assume!(t != u);
        prop_assert_ne!(scoped(Some(&t), &r), scoped(Some(&u), &r));
        prop_assert_ne!(scoped(Some(&t), &r), scoped(None, &r));
    }
}

#[test]
fn the_example_tenants_file_is_valid() {
    let text = include_str!("../../config/tenants.example.toml");
    let auth = Auth::parse(text, &|var| {
        (var == "REDLOCKD_TOKEN_BILLING").then(|| BILLING.to_owned())
    })
    .unwrap();
    assert_eq!(auth.tenants(), 2);
}
