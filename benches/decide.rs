//! Decide stage: assessments + policy -> verdict, and `judge` (parse + assess + decide), with
//! the default policy and with a 10,000-entry whitelist, plus loading that whitelist from JSON.
//! Run with `cargo bench --bench decide`; never part of CI (see docs/BENCHMARKS.md).

mod common;

use agentsh::judge::decide::{self, Policy};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn decide_only(c: &mut Criterion) {
    let mut g = c.benchmark_group("decide");
    let policies = [("default", Policy::default()), ("whitelist_10k", common::big_whitelist(10_000))];
    for (pname, policy) in &policies {
        for (name, text) in common::COMMANDS {
            let parts =
                agentsh::judge::assess::assess(&agentsh::judge::parse::parse(text).expect("bench commands parse"));
            g.bench_function(format!("{pname}/{name}"), |b| {
                b.iter_batched(|| parts.clone(), |p| decide::decide(text, p, policy), criterion::BatchSize::SmallInput)
            });
        }
    }
    g.finish();
}

fn judge(c: &mut Criterion) {
    let mut g = c.benchmark_group("judge");
    let policy = Policy::default();
    for (name, text) in common::COMMANDS {
        g.bench_function(*name, |b| b.iter(|| decide::judge(black_box(text), &policy)));
    }
    g.sample_size(20);
    for n in [1024, 8 * 1024, 32 * 1024, 63 * 1024] {
        let text = common::long_command(n);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("length", n), &text, |b, t| b.iter(|| decide::judge(t, &policy)));
    }
    g.finish();
}

fn load_whitelist(c: &mut Criterion) {
    let entries: Vec<String> = (0..10_000).map(|i| format!("\"tool{i} sub{} --flag\"", i % 7)).collect();
    let json = format!("{{\"commandWhitelist\": [{}]}}", entries.join(","));
    c.bench_function("config/whitelist_10k", |b| {
        b.iter(|| {
            let s = agentsh::policy::config::parse_settings("bench.json", black_box(&json));
            agentsh::policy::config::merge(vec![("bench.json".into(), s)])
        })
    });
}

criterion_group!(benches, decide_only, judge, load_whitelist);
criterion_main!(benches);
