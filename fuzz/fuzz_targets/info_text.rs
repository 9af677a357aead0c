//! `info_text`: see `redlockd_fuzz::info_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::info_text::check_info(data));
