//! Issue 22: speed work must leave every result bit-identical. Each config below runs
//! and its result object (minus `wall_time_s` and `config`, which the caller fills) is
//! compared, key by key, with the one recorded from the code before the speed work, in
//! `tests/fixtures/golden_results.json`. Keys added to the result object later are not
//! in the fixture and are not compared. Re-record (only for a deliberate model change,
//! saying so in the commit) with `FLASHLAB_RECORD_GOLDEN=1 cargo test -p flashlab-sim golden`.
//! No trims: their cost is a model under change (issue 16).

use super::settings;
use flashlab_sim::{run, run_synthetic};
use serde_json::{Map, Value};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden_results.json");

/// (name, extra `--set`s, replay as an SSDsim trace). Base: the small test device of `settings`.
fn configs() -> Vec<(String, Vec<String>, bool)> {
    let mut out = Vec::new();
    let base = "workload.prefill=true workload.requests=12000 workload.read_fraction=0.2";
    for scheme in ["page", "block", "bast", "bast-padding", "fast", "dftl"] {
        for timing in ["false", "true"] {
            for pattern in ["uniform", "sequential"] {
                out.push((
                    format!("{scheme}-{pattern}-timing-{timing}"),
                    format!("{base} ftl.mapping=\"{scheme}\" timing.enabled={timing} workload.pattern={pattern} ftl.log_blocks=8 ftl.map_cache_entries=256"),
                    false,
                ));
            }
        }
    }
    for victim in ["greedy", "fifo", "random", "d-choices", "cost-benefit", "cat", "weco", "wpo"] {
        for timing in ["false", "true"] {
            out.push((
                format!("page-{victim}-timing-{timing}"),
                format!("{base} gc.victim=\"{victim}\" timing.enabled={timing} workload.pattern=hotcold workload.aging_writes=3000"),
                false,
            ));
        }
    }
    let extra = [
        ("preemptible", "timing.enabled=true gc.mode=\"preemptible\" workload.aging_writes=5000"),
        ("dt-gc", "timing.enabled=true gc.preset=\"dt-gc\" workload.aging_writes=5000"),
        ("host-first", "timing.enabled=true timing.bus_arbitration=\"host-first\" workload.queue_depth=8"),
        ("qd8-copyback", "timing.enabled=true workload.queue_depth=8 timing.copyback=true timing.multiplane=true"),
        ("placement", "placement.enabled=true ftl.gc_streams=2 workload.pattern=hotcold"),
        ("buffer", "timing.enabled=true buffer.bytes=65536"),
        ("wear", "wear.static_threshold=4 workload.aging_writes=20000"),
        ("large-requests", "timing.enabled=true workload.request_bytes=32768"),
        ("no-prefill", "workload.prefill=false timing.enabled=true"),
        ("warmup", "workload.warmup=4000 workload.pattern=zipf"),
    ];
    for (name, sets) in extra {
        out.push((name.to_string(), format!("{base} {sets}"), false));
    }
    for arrival in ["workload.arrival=fixed workload.interarrival_us=50", "workload.queue_depth=4"] {
        out.push((format!("trace-{}", arrival.len()), format!("{base} timing.enabled=true {arrival}"), true));
    }
    out.into_iter().map(|(n, s, t)| (n, s.split_whitespace().map(String::from).collect(), t)).collect()
}

fn result_of(sets: &[String], as_trace: bool) -> Map<String, Value> {
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    let s = settings(&refs);
    let r = if as_trace {
        let mut w = flashlab_trace::TraceWriter::new(Vec::new(), flashlab_trace::TraceFormat::Ssdsim).unwrap();
        for req in flashlab_sim::hotness::synthetic_requests(&s).unwrap() {
            w.write(&req).unwrap();
        }
        let text = w.finish().unwrap();
        let mut trace_refs = refs.clone();
        trace_refs.extend(["workload.kind=trace", "workload.trace_path=t.ascii", "workload.arrival=trace"]);
        let ts = settings(&trace_refs);
        let reader = flashlab_trace::TraceReader::new(
            &text[..],
            flashlab_trace::TraceFormat::Ssdsim,
            flashlab_trace::ReaderOptions::named("t.ascii"),
        );
        run(&ts, reader, &mut |_| {}).unwrap()
    } else {
        run_synthetic(&s, &mut |_| {}).unwrap()
    };
    let Value::Object(mut m) = serde_json::to_value(r).unwrap() else { panic!("result is an object") };
    m.remove("wall_time_s");
    m.remove("config");
    m
}

#[test]
fn golden_results_are_unchanged() {
    let got: Map<String, Value> =
        configs().into_iter().map(|(name, sets, trace)| (name, Value::Object(result_of(&sets, trace)))).collect();
    if std::env::var_os("FLASHLAB_RECORD_GOLDEN").is_some() {
        std::fs::write(FIXTURE, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(want.len(), got.len(), "configs and fixture differ in number");
    for (name, w) in &want {
        let g = got.get(name).unwrap_or_else(|| panic!("config {name} missing"));
        for (key, wv) in w.as_object().unwrap() {
            let gv = &g[key];
            // Compare floats by their bits (JSON keeps a f64 exactly).
            assert_eq!(wv, gv, "config {name}: key {key} changed");
        }
    }
}
