//! Page-reference traces (docs/swap.md, "Trace format"). One reference per line:
//!
//! - Valgrind lackey (`valgrind --tool=lackey --trace-mem=yes`): ` L addr,size`
//!   (load = read), ` S addr,size` (store = write), ` M addr,size` (modify = write),
//!   `I  addr,size` (instruction fetch = read); addresses in hex without `0x`;
//! - or `R addr` / `W addr` with the address in hex (`0x` optional) or decimal.
//!
//! Blank lines, lines starting with `#` and lackey's `==pid==` banner lines are
//! skipped. Addresses are mapped to 4 KiB pages, and the pages to dense numbers in
//! order of first reference (the footprint is the number of distinct pages).

use crate::app::Ref;
use crate::SwapError;
use std::collections::HashMap;

/// A parsed trace: the references and the number of distinct pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefTrace {
    pub refs: Vec<Ref>,
    pub pages: u32,
}

/// Parse `text`; `source` names the file in errors (`source:LINE: ...`).
pub fn parse(text: &str, source: &str) -> Result<RefTrace, SwapError> {
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut refs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with("==") || l.starts_with("--") {
            continue;
        }
        let bad = |why: &str| SwapError::Trace(format!("{source}:{}: {why}: {l:?}", i + 1));
        let (kind, rest) = l.split_at(1);
        let write = match kind {
            "L" | "I" | "R" => false,
            "S" | "M" | "W" => true,
            _ => return Err(bad("expected a reference kind L, S, M, I (lackey) or R, W")),
        };
        let addr_text = rest.trim().split(',').next().unwrap_or("");
        let lackey = matches!(kind, "L" | "S" | "M" | "I");
        let addr =
            parse_addr(addr_text, lackey).ok_or_else(|| bad("expected an address (hex, or decimal after R/W)"))?;
        let next = ids.len() as u32;
        let page = *ids.entry(addr >> 12).or_insert(next);
        refs.push(Ref { page, write });
    }
    if refs.is_empty() {
        return Err(SwapError::Trace(format!("{source}: no references")));
    }
    Ok(RefTrace { refs, pages: ids.len() as u32 })
}

fn parse_addr(s: &str, lackey: bool) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if lackey {
        u64::from_str_radix(s, 16).ok()
    } else {
        s.parse().ok().or_else(|| u64::from_str_radix(s, 16).ok())
    }
}
