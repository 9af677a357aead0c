//! Ports for local servers that stay theirs while the server is down.
//!
//! A master killed and started again must find its port free. A port the
//! kernel hands out (a bind to port 0, or an outgoing connection's own port)
//! may go to any process in the meantime: another test's server took a
//! killed master's port before it restarted. So these ports lie below the
//! kernel's ephemeral range, where it hands out none, and each is claimed
//! by a lock on a file named after it: every process using this module
//! skips a port whose claim is held, and a claim ends with its holder,
//! however that process ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::ops::Range;
use std::path::PathBuf;

/// Where claimed ports come from: below Linux's default ephemeral range
/// (32768–60999), and so are these ports + 10000, the cluster bus of a
/// node before Redis 7.
const POOL: Range<u16> = 10_000..20_000;

/// A port held for one server across its restarts; released on drop.
#[derive(Debug)]
pub struct PortClaim {
    port: u16,
    /// `None` where claims cannot be made (the pool overlaps the kernel's
    /// ephemeral range, or no lock file can be written): then the port is
    /// one the kernel handed out, as before claims.
    _lock: Option<File>,
}

impl PortClaim {
    /// The claimed port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A port held by no claim: a placeholder, or a port some process
    /// took without one.
    pub(super) fn unclaimed(port: u16) -> PortClaim {
        PortClaim { port, _lock: None }
    }
}

/// Claims a free port of the pool, or, where claims cannot be made, a
/// port the kernel hands out that was free a moment ago (never 6379).
///
/// # Errors
/// When every port of the pool is claimed or taken, or no socket can be
/// bound.
pub fn claim_port() -> io::Result<PortClaim> {
    let pool = below_the_ephemeral_range(POOL);
    match (pool, claims_dir()) {
        (Some(pool), Some(dir)) => claim_in(&dir, pool),
        _ => Ok(PortClaim {
            port: super::free_port()?,
            _lock: None,
        }),
    }
}

/// `pool`, when it lies wholly below the kernel's ephemeral ports.
fn below_the_ephemeral_range(pool: Range<u16>) -> Option<Range<u16>> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let low: u32 = range.split_whitespace().next()?.parse().ok()?;
    (u32::from(pool.end) + 10_000 <= low).then_some(pool)
}

/// The directory of claim files, made if missing.
fn claims_dir() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join("redlockd-ports");
    std::fs::create_dir_all(&dir).ok().map(|()| dir)
}

/// Claims the first port of `pool`, from a random start, that no one has
/// claimed and no socket listens on.
fn claim_in(dir: &std::path::Path, pool: Range<u16>) -> io::Result<PortClaim> {
    let size = pool.end - pool.start;
    let start = fastrand::u16(0..size);
    for step in 0..size {
        let port = pool.start + (start + step) % size;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(port.to_string()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => continue,
            Err(TryLockError::Error(e)) => return Err(e),
        }
        // Claimed, but a process that claims nothing may listen there.
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(PortClaim {
                port,
                _lock: Some(file),
            });
        }
    }
    Err(io::Error::other(format!(
        "no free port in {}..{}: each is claimed in {} or taken",
        pool.start,
        pool.end,
        dir.display()
    )))
}

#[cfg(test)]
#[path = "ports_tests.rs"]
mod tests;
