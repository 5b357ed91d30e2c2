//! Application models: page-reference generators with stated parameters, read from
//! TOML (examples/swap/apps/*.toml, provenance in docs/swap.md).
//!
//! A model references `footprint_mib` of anonymous memory, `references` times. Each
//! reference is, with probability `sequential_share`, the next page of a cursor that
//! sweeps the footprint in order (a streaming pass: image rows, a matrix, a file being
//! encrypted), otherwise a random page, a "hot" one (the first `hot_fraction` of the
//! footprint) with probability `hot_share`. A reference writes with probability
//! `write_fraction`, and costs `cpu_ns_per_reference` of CPU. The first pass touches
//! every page in order (the application allocates and fills its memory).

use crate::SwapError;
use serde::Deserialize;

/// An application model as written in its TOML file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppModel {
    pub name: String,
    /// What the model stands for and where its numbers come from.
    pub provenance: String,
    pub footprint_mib: u64,
    pub references: u64,
    pub cpu_ns_per_reference: u64,
    pub write_fraction: f64,
    pub sequential_share: f64,
    #[serde(default)]
    pub hot_fraction: f64,
    #[serde(default)]
    pub hot_share: f64,
}

impl AppModel {
    /// Parse and validate a model; `source` names the file in errors.
    pub fn from_toml(text: &str, source: &str) -> Result<AppModel, SwapError> {
        let m: AppModel = toml::from_str(text).map_err(|e| SwapError::App(format!("{source}: {}", one_line(&e))))?;
        let bad = |key: &str, want: &str| Err(SwapError::App(format!("{source}: {key}: expected {want}")));
        if m.footprint_mib == 0 || m.footprint_mib > 1 << 20 {
            return bad("footprint_mib", "1 to 1048576");
        }
        if m.references == 0 {
            return bad("references", "at least 1");
        }
        for (k, v) in [
            ("write_fraction", m.write_fraction),
            ("sequential_share", m.sequential_share),
            ("hot_fraction", m.hot_fraction),
            ("hot_share", m.hot_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(k, "a fraction in [0, 1]");
            }
        }
        Ok(m)
    }

    pub fn footprint_pages(&self) -> u32 {
        (self.footprint_mib * 256) as u32
    }

    /// The reference stream, driven by `seed`.
    pub fn references(&self, seed: u64) -> AppRefs {
        let pages = self.footprint_pages();
        AppRefs {
            pages,
            hot_pages: ((pages as f64 * self.hot_fraction) as u32).max(1),
            left: self.references,
            first_pass: pages,
            cursor: 0,
            x: flashlab_workload::sub_seed(seed, "swap-app"),
            seq: threshold(self.sequential_share),
            hot: threshold(self.hot_share),
            write: threshold(self.write_fraction),
        }
    }
}

fn one_line(e: &toml::de::Error) -> String {
    e.to_string().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" ")
}

/// A probability as a threshold on a uniform u64.
fn threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else {
        (p * u64::MAX as f64) as u64
    }
}

/// One page reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ref {
    pub page: u32,
    pub write: bool,
}

/// The reference stream of an [`AppModel`].
pub struct AppRefs {
    pages: u32,
    hot_pages: u32,
    left: u64,
    first_pass: u32,
    cursor: u32,
    x: u64,
    seq: u64,
    hot: u64,
    write: u64,
}

impl AppRefs {
    #[inline]
    fn rand(&mut self) -> u64 {
        self.x = self.x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        flashlab_workload::mix64(self.x)
    }

    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        ((self.rand() as u128 * n as u128) >> 64) as u32
    }
}

impl Iterator for AppRefs {
    type Item = Ref;

    #[inline]
    fn next(&mut self) -> Option<Ref> {
        if self.first_pass > 0 {
            // Allocation: every page written once, in order (counts as a reference).
            let page = self.pages - self.first_pass;
            self.first_pass -= 1;
            return Some(Ref { page, write: true });
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let page = if self.rand() <= self.seq {
            let p = self.cursor;
            self.cursor = if p + 1 == self.pages { 0 } else { p + 1 };
            p
        } else if self.rand() <= self.hot {
            self.below(self.hot_pages)
        } else {
            self.below(self.pages)
        };
        let write = self.rand() <= self.write;
        Some(Ref { page, write })
    }
}
