//! Assess stage: parsed simple commands -> risk, category and reasons (the rule table).
//! Run with `cargo bench --bench assess`; never part of CI (see docs/BENCHMARKS.md).

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn commands(c: &mut Criterion) {
    let mut g = c.benchmark_group("assess");
    for (name, text) in common::COMMANDS {
        let script = agentsh::judge::parse::parse(text).expect("bench commands parse");
        g.bench_function(*name, |b| b.iter(|| agentsh::judge::assess::assess(black_box(&script))));
    }
    g.finish();
}

criterion_group!(benches, commands);
criterion_main!(benches);
