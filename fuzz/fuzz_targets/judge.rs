//! Fuzz target: the whole pure core (parse -> assess -> decide) must return a verdict for any
//! input, never panic, hang or run out of memory, and anything it cannot parse must never be allowed.
#![no_main]

use agentsh::judge::decide::{Policy, judge};
use agentsh::model::Decision;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let verdict = judge(text, &Policy::default());
    // Fail closed: text the parser refused is never allowed.
    if agentsh::judge::parse::parse(text).is_err() {
        assert_ne!(verdict.decision, Decision::Allow, "unparseable input was allowed: {text:?}");
    }
});
