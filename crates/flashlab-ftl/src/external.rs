//! A GC victim policy supplied from outside the crate (e.g. a Python callable), for
//! prototyping: `gc.victim = external` with [`FtlSettings::external_victim`] set.
//!
//! The FTL hands the callback a read-only snapshot of the plane's candidates and
//! expects one of their block ids back. Candidates are listed in the order of the
//! greedy index (fewest valid pages first; among equals, the order built-in greedy
//! prefers), so a callback that returns the first candidate with the fewest valid
//! pages chooses exactly what built-in `greedy` chooses.
//!
//! [`FtlSettings::external_victim`]: crate::FtlSettings::external_victim

use std::fmt;
use std::sync::{Arc, Mutex};

/// What a callback may know about one candidate block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub block: u32,
    pub valid: u32,
    pub erase_count: u32,
    /// Host pages written since the block's last page was programmed.
    pub age: u64,
    /// Seed 001's block temperature (mean temperature of its pages) where the FTL
    /// tracks it (a hot-data placement is configured), else `None`.
    pub temperature: Option<f64>,
}

/// The plane a callback decides for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneInfo {
    pub plane: u32,
    pub pages_per_block: u32,
    /// Host pages written so far (the FTL's logical clock).
    pub now: u64,
}

/// A victim policy outside the crate. `Err` aborts the run with that message.
pub trait VictimCallback: Send {
    fn choose(&mut self, plane: PlaneInfo, candidates: &[Candidate]) -> Result<u32, String>;
}

/// A shared handle to a [`VictimCallback`] that settings can carry (cloning shares it).
#[derive(Clone)]
pub struct ExternalVictim(Arc<Mutex<Box<dyn VictimCallback>>>);

impl ExternalVictim {
    pub fn new(callback: Box<dyn VictimCallback>) -> Self {
        ExternalVictim(Arc::new(Mutex::new(callback)))
    }

    /// Ask the callback; the answer must be one of the candidates.
    pub(crate) fn choose(&self, plane: PlaneInfo, candidates: &[Candidate]) -> Result<u32, String> {
        let mut cb = self.0.lock().map_err(|_| "the external GC victim policy panicked earlier".to_string())?;
        let block = cb.choose(plane, candidates)?;
        if candidates.iter().any(|c| c.block == block) {
            Ok(block)
        } else {
            Err(format!(
                "the external GC victim policy returned block {block}, which is not one of the plane's candidates"
            ))
        }
    }
}

impl fmt::Debug for ExternalVictim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExternalVictim(..)")
    }
}

impl PartialEq for ExternalVictim {
    /// Two handles are equal when they share the same callback.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
