//! What the fuzz targets check, one module per target (`request_decoding`,
//! `script_replies`, `info_text`, each with its seeds), shared by
//! `fuzz_targets/*` (which are one line each) and by this crate's tests,
//! which run every seed through the same checks and keep the committed
//! seeds (`fuzz/seeds/<target>/`) in step with [`seeds`]. `value` makes a
//! reply tree from fuzz bytes (and back, for the seeds).
//!
//! Each `check_*` function must never panic on any input, except to report
//! a broken invariant (that panic is the finding).

pub mod info_text;
pub mod request_decoding;
pub mod script_replies;
pub mod value;

use info_text::info_seeds;
use request_decoding::request_seeds;
use script_replies::reply_seeds;

/// The seed inputs of each target, by file name (`seed-<what>`), as
/// committed under `fuzz/seeds/<target>/`.
pub fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    match target {
        "request_decoding" => request_seeds(),
        "script_replies" => reply_seeds(),
        "info_text" => info_seeds(),
        other => panic!("no target {other}"),
    }
}

/// The fuzz targets, by name.
pub const TARGETS: [&str; 3] = ["request_decoding", "script_replies", "info_text"];

/// A lock value as the daemon issues them, in the seeds of two targets.
pub(crate) const VALUE: &str = "3f786850e387550fdab836ed7e6dc881de23001b";

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::info_text::check_info;
    use crate::request_decoding::check_request;
    use crate::script_replies::check_replies;

    fn seed_dir(target: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds").join(target)
    }

    #[test]
    fn committed_seeds_are_the_generated_ones() {
        let write = std::env::var_os("REDLOCKD_FUZZ_WRITE_SEEDS").is_some();
        for target in TARGETS {
            let dir = seed_dir(target);
            let seeds = seeds(target);
            if write {
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                for (name, bytes) in &seeds {
                    std::fs::write(dir.join(name), bytes).unwrap();
                }
            }
            let mut committed: Vec<String> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            committed.sort();
            let mut names: Vec<String> = seeds.iter().map(|(n, _)| n.clone()).collect();
            names.sort();
            assert_eq!(committed, names, "{target}: run with REDLOCKD_FUZZ_WRITE_SEEDS=1");
            for (name, bytes) in seeds {
                let on_disk = std::fs::read(dir.join(&name)).unwrap();
                assert_eq!(on_disk, bytes, "{target}/{name}: run with REDLOCKD_FUZZ_WRITE_SEEDS=1");
            }
        }
    }

    #[test]
    fn every_seed_passes_its_checks() {
        for (_, bytes) in seeds("request_decoding") {
            check_request(&bytes);
        }
        for (_, bytes) in seeds("script_replies") {
            check_replies(&bytes);
        }
        for (_, bytes) in seeds("info_text") {
            check_info(&bytes);
        }
    }
}

// In the instrumented build (`scripts/fuzz` runs these tests on the fuzz
// build's dependencies), the coverage hooks every object calls come from
// libFuzzer's runtime; a target that does nothing links it in.
#[cfg(all(test, fuzzing))]
libfuzzer_sys::fuzz_target!(|_data: &[u8]| {});
