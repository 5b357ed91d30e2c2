//! Parse throughput of generated in-memory traces (1 000 000 lines each).
//! Criterion reports the throughput in elements (= lines) per second.

use std::fmt::Write as _;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use flashlab_trace::{ReaderOptions, TraceFormat, TraceReader};

const LINES: u64 = 1_000_000;

/// A tiny deterministic generator (no clock, no OS randomness).
fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

fn ssdsim_trace() -> String {
    let mut s = String::with_capacity(40 * LINES as usize);
    let mut rng = 1;
    for i in 0..LINES {
        let lsn = lcg(&mut rng) % 500_000_000;
        let sectors = 8 * (1 + lcg(&mut rng) % 32);
        let _ = writeln!(s, "{} {} {lsn} {sectors} {}", i * 26_214, i % 22, lcg(&mut rng) % 2);
    }
    s
}

fn msr_trace() -> String {
    let mut s = String::with_capacity(64 * LINES as usize);
    let mut rng = 2;
    for i in 0..LINES {
        let offset = (lcg(&mut rng) % 1_000_000_000) * 512;
        let size = 4096 * (1 + lcg(&mut rng) % 16);
        let op = if lcg(&mut rng).is_multiple_of(2) { "Read" } else { "Write" };
        let _ = writeln!(
            s,
            "{},hm,{},{op},{offset},{size},{}",
            128_166_372_003_061_629 + i * 1_000,
            i % 3,
            lcg(&mut rng) % 100_000
        );
    }
    s
}

fn bench_format(c: &mut Criterion, name: &str, format: TraceFormat, text: &str) {
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(LINES));
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            let reader = TraceReader::new(black_box(text.as_bytes()), format, ReaderOptions::default());
            let n = reader.map(|r| r.map(|req| req.len_bytes).unwrap_or(0)).fold(0u64, u64::wrapping_add);
            black_box(n)
        })
    });
    group.finish();
}

fn parse_benches(c: &mut Criterion) {
    let ssdsim = ssdsim_trace();
    bench_format(c, "ssdsim_1M_lines", TraceFormat::Ssdsim, &ssdsim);
    let msr = msr_trace();
    bench_format(c, "msr_1M_lines", TraceFormat::Msr, &msr);
}

criterion_group!(benches, parse_benches);
criterion_main!(benches);
