//! Prints the mount-time / memory comparison table of docs/flashfs.md:
//! `cargo run --release -p flashlab-flashfs --example mount_scaling`
//! (add `-- --json` for JSON).

fn main() {
    let blocks = [128u32, 256, 512, 1024, 2048];
    let rows: Vec<_> = blocks.iter().map(|b| flashlab_flashfs::scaling::measure(*b, 0.5)).collect();
    if std::env::args().any(|a| a == "--json") {
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
    } else {
        print!("{}", flashlab_flashfs::scaling::markdown(&rows));
    }
}
