//! `flashlab reproduce wpo-gc` (seed 001) — being written for its issue.

use std::path::Path;

pub fn run(_out: &Path, _quick: bool) -> anyhow::Result<()> {
    anyhow::bail!("reproduce wpo-gc is not available in this version yet")
}
