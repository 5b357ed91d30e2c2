//! What a run did to its input without failing: requests whose timestamps went back
//! (issued at the previous time instead), requests folded into the logical space, and
//! outlying gaps between timestamps. Counted so that the result and the CLI can say so.

/// A gap between consecutive timestamps counts as outlying when it is at least
/// 2^OUTLIER_LOG2 (1024) times the median gap and at least [`OUTLIER_MIN_NS`].
const OUTLIER_LOG2: usize = 10;
const OUTLIER_MIN_NS: u64 = 1_000_000_000;

#[derive(Clone, Debug)]
pub(crate) struct InputChecks {
    latest_ns: Option<u64>,
    pub reordered: u64,
    pub folded: u64,
    /// Forward gaps between timestamps by floor(log2(gap_ns)) + 1 (bucket 0 = no gap).
    gaps: [u64; 65],
}

impl InputChecks {
    pub fn new() -> Self {
        InputChecks { latest_ns: None, reordered: 0, folded: 0, gaps: [0; 65] }
    }

    /// Account for one request arriving at `time_ns`; `folded` when its pages were wrapped.
    #[inline]
    pub fn observe(&mut self, time_ns: u64, folded: bool) {
        self.folded += folded as u64;
        match self.latest_ns {
            Some(t) if time_ns < t => self.reordered += 1,
            Some(t) => {
                self.gaps[bucket(time_ns - t)] += 1;
                self.latest_ns = Some(time_ns);
            }
            None => self.latest_ns = Some(time_ns),
        }
    }

    /// Gaps of at least 1 s that are at least 1024 times the median gap.
    pub fn outlying(&self) -> u64 {
        let n: u64 = self.gaps.iter().sum();
        if n == 0 {
            return 0;
        }
        let (mut seen, mut median) = (0, 0);
        for (b, &c) in self.gaps.iter().enumerate() {
            seen += c;
            if seen * 2 >= n {
                median = b;
                break;
            }
        }
        let from = (median + OUTLIER_LOG2 + 1).max(bucket(OUTLIER_MIN_NS) + 1);
        self.gaps.iter().skip(from).sum()
    }
}

/// 0 for 0, else floor(log2(gap)) + 1: bucket b holds gaps in [2^(b-1), 2^b).
fn bucket(gap_ns: u64) -> usize {
    (64 - gap_ns.leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reordered_and_folded_are_counted() {
        let mut c = InputChecks::new();
        for (t, f) in [(10, false), (5, true), (20, false), (20, false), (19, true)] {
            c.observe(t, f);
        }
        assert_eq!((c.reordered, c.folded), (2, 2));
    }

    #[test]
    fn one_glitched_timestamp_is_outlying() {
        let mut c = InputChecks::new();
        for i in 0..1000u64 {
            c.observe(i * 1_000_000, false); // 1 ms apart
        }
        assert_eq!(c.outlying(), 0);
        c.observe(1_270_000_000 * 1_000_000_000, false);
        assert_eq!(c.outlying(), 1);
        // Long but regular gaps (1 h each) are not outlying.
        let mut c = InputChecks::new();
        (0..100u64).for_each(|i| c.observe(i * 3_600_000_000_000, false));
        assert_eq!(c.outlying(), 0);
    }
}
