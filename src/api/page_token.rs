//! Listing page tokens (docs/design.md#listing-and-force-release): where a
//! listing stands, signed with HMAC-SHA-256 under a key drawn at start, for
//! one tenant and prefix. A token this daemon did not make, or made for
//! another tenant or prefix, is refused: a client cannot steer a scan, nor
//! read another tenant's keys through one.

use ring::hmac;

use crate::locks::error::Error;
use crate::redlock::Page;

/// Bytes of the signature (HMAC-SHA-256).
const TAG_BYTES: usize = 32;
/// The token layout's version.
const VERSION: u8 = 1;

/// Signs and checks page tokens.
pub(crate) struct PageTokens {
    key: hmac::Key,
}

fn forged() -> Error {
    Error::invalid(
        "page_token",
        "is not a token this daemon made for this tenant and prefix (tokens last as long as the daemon that made them runs)",
    )
}

impl PageTokens {
    /// Tokens signed under a fresh random key.
    pub(crate) fn new() -> PageTokens {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the operating system's random source failed");
        PageTokens {
            key: hmac::Key::new(hmac::HMAC_SHA256, &secret),
        }
    }

    /// What is signed: the payload, the tenant, a 0 byte, the prefix (a
    /// tenant name holds no 0 byte).
    fn signed(payload: &[u8], tenant: &str, prefix: &str) -> Vec<u8> {
        [payload, tenant.as_bytes(), &[0], prefix.as_bytes()].concat()
    }

    /// The token of `page` for `tenant`'s listing of `prefix`.
    pub(crate) fn encode(&self, page: &Page, tenant: &str, prefix: &str) -> String {
        let mut payload = vec![VERSION, page.node as u8];
        payload.extend(page.cursor.map_or([0xff; 8], u64::to_be_bytes));
        payload.push(u8::from(page.cursor.is_some()));
        payload.extend(page.skipped.to_be_bytes());
        for name in &page.pending {
            payload.extend((name.len() as u16).to_be_bytes());
            payload.extend(name.as_bytes());
        }
        let tag = hmac::sign(&self.key, &Self::signed(&payload, tenant, prefix));
        payload.extend(tag.as_ref());
        hex::encode(payload)
    }

    /// The page of a token made by `encode` for the same tenant and prefix.
    ///
    /// # Errors
    /// `InvalidArgument` naming `page_token` for anything else.
    pub(crate) fn decode(&self, token: &str, tenant: &str, prefix: &str) -> Result<Page, Error> {
        let bytes = hex::decode(token).map_err(|_| forged())?;
        let at = bytes.len().checked_sub(TAG_BYTES).ok_or_else(forged)?;
        let (payload, tag) = bytes.split_at(at);
        // In constant time.
        hmac::verify(&self.key, &Self::signed(payload, tenant, prefix), tag).map_err(|_| forged())?;
        read(payload).ok_or_else(forged)
    }
}

fn read(payload: &[u8]) -> Option<Page> {
    let (&version, rest) = payload.split_first()?;
    let (&node, rest) = rest.split_first()?;
    let (cursor, rest) = rest.split_at_checked(8)?;
    let (&has_cursor, rest) = rest.split_first()?;
    let (skipped, mut rest) = rest.split_at_checked(4)?;
    if version != VERSION {
        return None;
    }
    let mut pending = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_at_checked(2)?;
        let (name, tail) = tail.split_at_checked(u16::from_be_bytes([len[0], len[1]]) as usize)?;
        pending.push(String::from_utf8(name.to_vec()).ok()?);
        rest = tail;
    }
    Some(Page {
        node: node as usize,
        cursor: (has_cursor == 1).then(|| u64::from_be_bytes(cursor.try_into().expect("8 bytes"))),
        skipped: u32::from_be_bytes(skipped.try_into().expect("4 bytes")),
        pending,
    })
}

#[cfg(test)]
#[path = "page_token_tests.rs"]
mod tests;
