//! `request_decoding`: see `redlockd_fuzz::request_decoding`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| redlockd_fuzz::request_decoding::check_request(data));
