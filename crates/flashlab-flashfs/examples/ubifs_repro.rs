//! Runs the seed-000 reproduction core and prints the Markdown
//! (`cargo run --release -p flashlab-flashfs --example ubifs_repro [-- full]`).

fn main() {
    let full = std::env::args().any(|a| a == "full");
    let plan = flashlab_flashfs::fsbench::repro::Plan::new(!full);
    let t = std::time::Instant::now();
    match flashlab_flashfs::fsbench::repro::run(&plan) {
        Ok(rep) => {
            println!("{}\n(wall {:.1} s)", flashlab_flashfs::fsbench::repro::markdown(&rep), t.elapsed().as_secs_f64())
        }
        Err(e) => eprintln!("error: {e}"),
    }
}
