//! `info_text`: see `redlockd_fuzz::check_info`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::check_info(data));
