//! `request_decoding`: see `redlockd_fuzz::check_request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::check_request(data));
