//! Prints the accuracy of every built-in identifier (default parameters) against the
//! default window oracle on a seeded hot/cold stream:
//! `cargo run --release -p flashlab-hotdata --example accuracy [LOGICAL_BLOCKS] [WRITES]`.

#[path = "../tests/common/workload.rs"]
mod workload;

use flashlab_hotdata::{evaluate_with_warmup, IdentifierSpec, WindowOracle, WindowOracleParams, NAMES};

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let blocks = args.first().copied().unwrap_or(8192);
    let n = args.get(1).copied().unwrap_or(1_000_000) as usize;
    let writes = workload::hot_cold(7, n, blocks, 0.8);
    let mut ids: Vec<_> =
        NAMES.iter().map(|name| IdentifierSpec::from_name(name).unwrap().build(1, blocks).unwrap()).collect();
    let mut oracle = WindowOracle::new(&WindowOracleParams::default(), 1).unwrap();
    let warmup = (n / 10) as u64;
    let acc = evaluate_with_warmup(writes.iter().copied(), warmup, &mut ids, &mut oracle);
    println!("{blocks} logical blocks, {n} writes (80 % to 5 %), oracle W=5000 k=4");
    println!("{:<18} {:>10} {:>10} {:>9} {:>10}", "name", "false_hot", "false_cold", "hot", "bytes");
    for a in &acc {
        println!(
            "{:<18} {:>10.4} {:>10.4} {:>9.4} {:>10}",
            a.name,
            a.false_hot_rate,
            a.false_cold_rate,
            a.identifier_hot as f64 / a.queries as f64,
            a.memory_bytes
        );
    }
    println!("oracle hot share {:.4}", acc[0].oracle_hot as f64 / acc[0].queries as f64);
}
