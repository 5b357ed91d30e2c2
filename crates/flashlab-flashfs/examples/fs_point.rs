//! Runs one point of the seed-000 reproduction and prints its counters, wall
//! time and the peak memory of the process (for profiling and scaling checks):
//! `cargo run --release -p flashlab-flashfs --example fs_point -- MIB WORKLOAD UTIL CONFIG [elide|store]`
//! (WORKLOAD: dd | fileserver | varmail; CONFIG: baseline | hot-journals |
//! delayed-commit | validity-bitmap | optimised).

use flashlab_flashfs::fsbench::{repro::Plan, run_point};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let mib: u32 = arg(0, "256").parse().expect("MIB: a number");
    let (work, util, config) = (arg(1, "fileserver"), arg(2, "90"), arg(3, "baseline"));
    let util: u32 = util.parse().expect("UTIL: a percentage");
    let plan = Plan::sized(mib, vec![util], false);
    let points = plan.points();
    let Some(mut p) = points
        .iter()
        .find(|p| p.config == config && format!("{:?}", p.workload.kind).eq_ignore_ascii_case(&work))
        .cloned()
    else {
        eprintln!("error: no point {work} / {config} in the plan");
        std::process::exit(2);
    };
    if let Some(mode) = a.get(4) {
        p.fs.elide_payload = mode == "elide";
    }
    let t = std::time::Instant::now();
    match run_point(&p) {
        Ok(r) => println!(
            "{mib} MiB {work} {util}% {config}: pages {} erases {} reclaims {} gc_pages_read {} commits {} ({:.1} s)",
            r.pages_programmed,
            r.erases,
            r.reclaims,
            r.gc_pages_read,
            r.commits,
            t.elapsed().as_secs_f64()
        ),
        Err(e) => eprintln!("error: {e}"),
    }
}
