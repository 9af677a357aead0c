//! `script_replies`: see `redlockd_fuzz::check_replies`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::check_replies(data));
