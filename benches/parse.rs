//! Parse stage: command text -> simple commands (brush-parser plus agentsh's walker).
//! Run with `cargo bench --bench parse`; never part of CI (see docs/BENCHMARKS.md).

mod common;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn commands(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    for (name, text) in common::COMMANDS {
        g.bench_function(*name, |b| b.iter(|| agentsh::judge::parse::parse(black_box(text))));
    }
    g.finish();
}

fn length(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse_length");
    g.sample_size(20);
    for n in [1024, 8 * 1024, 32 * 1024, 63 * 1024] {
        let text = common::long_command(n);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, t| b.iter(|| agentsh::judge::parse::parse(t)));
    }
    g.finish();
}

criterion_group!(benches, commands, length);
criterion_main!(benches);
