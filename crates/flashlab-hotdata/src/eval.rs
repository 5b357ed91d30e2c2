//! Accuracy of identifiers against the exact window oracle.
//!
//! For each write: the write is recorded in every identifier and in the oracle, then
//! each identifier and the oracle are asked whether that block is hot. An identifier
//! answer of hot where the oracle says cold is a *false hot*; cold where the oracle
//! says hot is a *false cold*.
//!
//! `false_hot_rate = false_hot / (queries where the oracle said cold)` and
//! `false_cold_rate = false_cold / (queries where the oracle said hot)`, each 0 when
//! its denominator is 0. Queries are per write, so blocks are weighted by how often
//! they are written. Nothing here reads the clock; callers time runs themselves.

use serde::{Deserialize, Serialize};

use crate::window_oracle::WindowOracle;
use crate::{HotDataIdentifier, Identifier};

/// Agreement of one identifier with the oracle.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Accuracy {
    /// The identifier's kind name.
    pub name: String,
    /// Queries counted (one per write after warm-up).
    pub queries: u64,
    /// Queries the identifier called hot and the oracle cold.
    pub false_hot: u64,
    /// Queries the identifier called cold and the oracle hot.
    pub false_cold: u64,
    /// Queries the oracle called hot.
    pub oracle_hot: u64,
    /// Queries the identifier called hot.
    pub identifier_hot: u64,
    /// `false_hot / (queries - oracle_hot)`, 0 when no query was oracle-cold.
    pub false_hot_rate: f64,
    /// `false_cold / oracle_hot`, 0 when no query was oracle-hot.
    pub false_cold_rate: f64,
    /// The identifier's [`HotDataIdentifier::memory_bytes`].
    pub memory_bytes: usize,
}

impl Accuracy {
    fn new(name: &str, memory_bytes: usize) -> Self {
        Accuracy {
            name: name.to_string(),
            queries: 0,
            false_hot: 0,
            false_cold: 0,
            oracle_hot: 0,
            identifier_hot: 0,
            false_hot_rate: 0.0,
            false_cold_rate: 0.0,
            memory_bytes,
        }
    }

    #[inline]
    fn count(&mut self, hot: bool, truth: bool) {
        self.queries += 1;
        self.oracle_hot += u64::from(truth);
        self.identifier_hot += u64::from(hot);
        self.false_hot += u64::from(hot && !truth);
        self.false_cold += u64::from(!hot && truth);
    }

    fn finish(&mut self) {
        let ratio = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        self.false_hot_rate = ratio(self.false_hot, self.queries - self.oracle_hot);
        self.false_cold_rate = ratio(self.false_cold, self.oracle_hot);
    }
}

/// Runs `writes` through every identifier and the oracle and counts disagreements
/// (see the module docs for the definitions). One [`Accuracy`] per identifier, in order.
pub fn evaluate(
    writes: impl Iterator<Item = u64>,
    identifiers: &mut [Identifier],
    oracle: &mut WindowOracle,
) -> Vec<Accuracy> {
    evaluate_with_warmup(writes, 0, identifiers, oracle)
}

/// Like [`evaluate`], but the first `warmup_writes` writes are recorded without being
/// counted (so that cold-start state does not dominate short runs).
pub fn evaluate_with_warmup(
    writes: impl Iterator<Item = u64>,
    warmup_writes: u64,
    identifiers: &mut [Identifier],
    oracle: &mut WindowOracle,
) -> Vec<Accuracy> {
    let mut acc: Vec<Accuracy> = identifiers.iter().map(|id| Accuracy::new(id.name(), id.memory_bytes())).collect();
    for (i, lba) in writes.enumerate() {
        let truth = oracle.record_and_query(lba);
        let counted = i as u64 >= warmup_writes;
        for (id, a) in identifiers.iter_mut().zip(acc.iter_mut()) {
            let hot = id.record_and_query(lba);
            if counted {
                a.count(hot, truth);
            }
        }
    }
    acc.iter_mut().for_each(Accuracy::finish);
    acc
}

/// Records every write of `writes` in `identifier`, querying after each; returns how
/// many queries said hot. The loop the CLI and the bench time for `ns_per_write`.
pub fn replay(identifier: &mut Identifier, writes: &[u64]) -> u64 {
    writes.iter().map(|&lba| u64::from(identifier.record_and_query(lba))).sum()
}
