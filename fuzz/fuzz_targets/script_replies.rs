//! `script_replies`: see `redlockd_fuzz::script_replies`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::script_replies::check_replies(data));
