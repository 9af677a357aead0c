//! What redlockctl writes. A closed stdout (`redlockctl acquire x | head -1`)
//! ends it quietly with the status a shell reports for a process that
//! SIGPIPE ended (141), as `cat` and `grep` do; stderr that cannot be
//! written is passed over, so that `run` and `elect` go on supervising their
//! command (docs/operations.md#redlockctl-run-and-elect).

use std::fmt;
use std::io::{self, Write};

/// The exit status for a closed stdout: 128 + SIGPIPE.
const EXIT_BROKEN_PIPE: i32 = 141;

/// Writes a line to stdout.
pub fn line(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(error) = writeln!(stdout, "{args}").and_then(|()| stdout.flush()) {
        if error.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        warn(format_args!("cannot write to stdout: {error}"));
        std::process::exit(2);
    }
}

/// Writes `redlockctl: <message>` to stderr, if it can.
pub fn warn(args: fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "redlockctl: {args}");
}

/// A line on stdout (`println!` that ends quietly on a closed pipe).
macro_rules! out {
    ($($arg:tt)*) => { crate::output::line(format_args!($($arg)*)) };
}

/// `redlockctl: …` on stderr (`eprintln!` that never panics).
macro_rules! say {
    ($($arg:tt)*) => { crate::output::warn(format_args!($($arg)*)) };
}
