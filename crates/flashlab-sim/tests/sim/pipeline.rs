//! A pipelined timed run (the FTL and the timeline on two threads, `crate::pipeline`)
//! gives exactly the serial run's result and end-of-run distributions. An observer
//! that wants every request's record keeps a run serial, so the same config runs both ways.

use super::settings;
use flashlab_sim::{pipelined, run_observed, run_synthetic_observed, Observer, RequestRecord, RunEnd, RunResult};

struct Capture {
    records: bool,
    seen: u64,
    end: Option<RunEnd>,
}

impl Observer for Capture {
    fn wants_requests(&self) -> bool {
        self.records
    }
    fn request(&mut self, _record: &RequestRecord) {
        self.seen += 1;
    }
    fn end(&mut self, end: &RunEnd) {
        self.end = Some(end.clone());
    }
}

/// (result, end) of a synthetic run, serial (`records`) or pipelined.
fn synthetic(sets: &[&str], records: bool) -> (RunResult, Option<RunEnd>) {
    let mut obs = Capture { records, seen: 0, end: None };
    let r = run_synthetic_observed(&settings(sets), &mut obs).unwrap();
    assert_eq!(obs.seen > 0, records);
    (r, obs.end)
}

/// The same, replaying the synthetic workload as an SSDsim trace.
fn replayed(sets: &[&str], records: bool) -> (RunResult, Option<RunEnd>) {
    let mut w = flashlab_trace::TraceWriter::new(Vec::new(), flashlab_trace::TraceFormat::Ssdsim).unwrap();
    for req in flashlab_sim::hotness::synthetic_requests(&settings(sets)).unwrap() {
        w.write(&req).unwrap();
    }
    let text = w.finish().unwrap();
    let mut trace_sets = sets.to_vec();
    trace_sets.extend(["workload.kind=trace", "workload.trace_path=t.ascii", "workload.arrival=trace"]);
    let reader = flashlab_trace::TraceReader::new(
        &text[..],
        flashlab_trace::TraceFormat::Ssdsim,
        flashlab_trace::ReaderOptions::named("t.ascii"),
    );
    let mut obs = Capture { records, seen: 0, end: None };
    let r = run_observed(&settings(&trace_sets), reader, &mut obs).unwrap();
    (r, obs.end)
}

#[test]
fn a_pipelined_run_equals_the_serial_run() {
    let base = "timing.enabled=true timing.pipeline=true workload.prefill=true workload.requests=5000 workload.read_fraction=0.2";
    let configs = [
        "workload.pattern=hotcold",
        "workload.trim_fraction=0.1 workload.request_bytes=8192",
        "workload.trim_fraction=0.1 timing.trim_queued=true workload.queue_depth=4",
        "ftl.mapping=\"dftl\" ftl.map_cache_entries=256 workload.trim_fraction=0.05",
        "ftl.mapping=\"bast\" ftl.log_blocks=8",
        "ftl.mapping=\"fast\" ftl.log_blocks=8 workload.pattern=sequential",
        "timing.bus_arbitration=\"host-first\" workload.queue_depth=8",
        "workload.queue_depth=8 timing.copyback=true timing.multiplane=true",
        "buffer.bytes=65536 workload.request_bytes=16384",
        "workload.prefill=false workload.arrival=fixed workload.interarrival_us=20",
    ];
    for extra in configs {
        let sets: Vec<&str> = base.split_whitespace().chain(extra.split_whitespace()).collect();
        // The pipelined side of the comparison really is pipelined; records keep it serial.
        assert!(pipelined(&settings(&sets), false) && !pipelined(&settings(&sets), true), "{extra}");
        assert_eq!(synthetic(&sets, true), synthetic(&sets, false), "{extra}");
        // SSDsim traces carry no TRIMs.
        if !extra.contains("trim") {
            assert_eq!(replayed(&sets, true), replayed(&sets, false), "{extra} (trace)");
        }
    }
}

#[test]
fn the_pipeline_is_off_unless_asked_for_and_allowed() {
    let on = ["timing.enabled=true", "timing.pipeline=true"];
    assert!(pipelined(&settings(&on), false));
    assert!(!pipelined(&settings(&["timing.enabled=true"]), false), "off by default");
    assert!(!pipelined(&settings(&["timing.enabled=false", "timing.pipeline=true"]), false), "counting mode");
    assert!(!pipelined(&settings(&[on[0], on[1], "workload.warmup=10"]), false), "a warm-up mark");
}
