//! Page tokens (docs/design.md#listing-and-force-release): read back for their
//! tenant and prefix only, a changed or made-up one refused naming the field.

use super::*;

fn page() -> Page {
    Page {
        node: 2,
        cursor: Some(123_456),
        skipped: 0b1,
        pending: vec!["tenant:t:lock:a".into(), "tenant:t:lock:é".into()],
    }
}

#[test]
fn a_token_reads_back_for_its_tenant_and_prefix_only() {
    let tokens = PageTokens::new();
    let token = tokens.encode(&page(), "t", "a");
    assert_eq!(tokens.decode(&token, "t", "a"), Ok(page()));
    let done = Page { cursor: None, ..page() };
    assert_eq!(tokens.decode(&tokens.encode(&done, "t", "a"), "t", "a"), Ok(done));
    for (tenant, prefix) in [("u", "a"), ("t", "b"), ("", "ta")] {
        assert!(tokens.decode(&token, tenant, prefix).is_err(), "{tenant} {prefix}");
    }
    // Another daemon's key.
    assert!(PageTokens::new().decode(&token, "t", "a").is_err());
}

#[test]
fn a_changed_or_made_up_token_is_refused_naming_the_field() {
    let tokens = PageTokens::new();
    let token = tokens.encode(&page(), "t", "a");
    let mut flipped = token.clone().into_bytes();
    flipped[5] = if flipped[5] == b'0' { b'1' } else { b'0' };
    for bad in [
        String::from_utf8(flipped).unwrap(),
        "zz".into(),
        String::new(),
        "00".repeat(40),
    ] {
        let Err(Error::InvalidArgument { field, .. }) = tokens.decode(&bad, "t", "a") else {
            panic!("{bad} was taken");
        };
        assert_eq!(field, "page_token");
    }
}
