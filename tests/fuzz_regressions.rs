//! Every input the fuzzer (fuzz/fuzz_targets/judge.rs) found, run through the judge again.
//! `crash-*`, `timeout-*` and `oom-*` files are reproducers of findings that were fixed: a
//! crasher must now be refused (deny); a slow input must never run unasked. The rest are a small minimized corpus of interesting inputs: each
//! must get a verdict, and text the parser refuses is never allowed. (How fast: see
//! eval/pathological.sh; no timed tests here.)

use agentsh::judge::decide::Policy;
use agentsh::model::Decision;
use agentsh::run::judging::{JUDGE_BUDGET, judge_bounded};
use std::path::Path;
use std::time::Duration;

#[test]
fn every_fuzz_finding_gets_a_fail_closed_verdict() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut reproducers = 0;
    let mut corpus = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/fuzz-regressions") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        // The fuzz target skips non-UTF-8 input, as agentsh's callers hand it strings.
        let Ok(text) = std::str::from_utf8(&bytes) else { continue };
        // What the binary runs: a panic or an overrun in the parser is a deny, never a crash.
        // Slow inputs get a shorter bound here: either outcome (judged or refused) is checked.
        let budget = if name.starts_with("timeout-") { Duration::from_millis(500) } else { JUDGE_BUDGET };
        let verdict = judge_bounded(text, Policy::default().into(), budget);
        if name.starts_with("crash-") {
            assert_eq!(verdict.decision, Decision::Deny, "{name}: {:?}", verdict.reasons);
            reproducers += 1;
        } else if name.starts_with("timeout-") || name.starts_with("oom-") {
            // Refused before parsing, refused by the time bound, or (slow only under the
            // fuzzer's sanitizer) judged in time: never allowed to run unasked.
            assert_ne!(verdict.decision, Decision::Allow, "{name}: {:?}", verdict.reasons);
            reproducers += 1;
        } else {
            if agentsh::judge::parse::parse(text).is_err() {
                assert_ne!(verdict.decision, Decision::Allow, "{name}: unparseable input allowed");
            }
            corpus += 1;
        }
    }
    assert!(reproducers >= 3, "the crash and timeout reproducers are missing");
    assert!(corpus > 0, "the minimized corpus is missing");
}

#[test]
fn a_verdict_that_takes_too_long_is_a_deny() {
    // Balanced parentheses around an unclosed `$"` in a here-document body: brush-parser's time
    // doubles per line (found by fuzzing; 30 lines would take hours). The binary's bounded judge
    // refuses it instead of hanging.
    let text = format!("cat <<EOF\n{}{}\nEOF\n", "a$($\"x\n".repeat(30), ")".repeat(30));
    let v = judge_bounded(&text, Policy::default().into(), Duration::from_millis(300));
    assert_eq!(v.decision, Decision::Deny);
    assert!(v.reasons.iter().any(|r| r.contains("takes too long to parse")), "{:?}", v.reasons);
    // An ordinary command is judged as usual.
    let v = judge_bounded("ls -la", Policy::default().into(), JUDGE_BUDGET);
    assert_eq!(v.decision, Decision::Allow);
}
