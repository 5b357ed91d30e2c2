//! GC victim selection: a pure decision over a [`BlockView`].

use crate::FtlError;
use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a policy may know about one candidate block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockInfo {
    pub valid: u32,
    pub erase_count: u32,
    /// Logical time (host pages written so far) when the block's last page was programmed.
    pub close_time: u64,
}

/// A plane's GC candidates as a policy sees them. Only *closed* (fully programmed,
/// not being written) blocks are candidates, so no policy can pick an open block.
pub trait BlockView {
    fn pages_per_block(&self) -> u32;
    /// Current logical time (host pages written).
    fn now(&self) -> u64;
    /// The candidate blocks, in no particular order.
    fn candidates(&self) -> &[u32];
    fn info(&self, block: u32) -> BlockInfo;
    /// A candidate with the fewest valid pages. Views with an index override this.
    fn min_valid(&self) -> Option<u32> {
        self.candidates().iter().copied().min_by_key(|&b| self.info(b).valid)
    }
    /// The candidate closed longest ago. Views with an index override this.
    fn oldest(&self) -> Option<u32> {
        self.candidates().iter().copied().min_by_key(|&b| self.info(b).close_time)
    }
    /// Lowest and highest erase count of the plane's blocks (default: of the candidates).
    fn erase_range(&self) -> (u32, u32) {
        let it = self.candidates().iter().map(|&b| self.info(b).erase_count);
        (it.clone().min().unwrap_or(0), it.max().unwrap_or(0))
    }
}

/// A hand-built view for tests and tools.
#[derive(Clone, Debug, Default)]
pub struct VecView {
    pub pages_per_block: u32,
    pub now: u64,
    pub blocks: Vec<u32>,
    pub infos: Vec<BlockInfo>,
}

impl BlockView for VecView {
    fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }
    fn now(&self) -> u64 {
        self.now
    }
    fn candidates(&self) -> &[u32] {
        &self.blocks
    }
    fn info(&self, block: u32) -> BlockInfo {
        let i = self.blocks.iter().position(|&b| b == block).expect("block in view");
        self.infos[i]
    }
}

/// A victim-selection policy: choose one candidate, or none if there is none.
pub trait VictimSelector {
    fn choose<V: BlockView>(&self, view: &V, rng: &mut Xoshiro256PlusPlus) -> Option<u32>;
}

/// The built-in victim policies, chosen by name from the config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VictimPolicy {
    /// Fewest valid pages.
    Greedy,
    /// Oldest closed block (LRU cleaning in Desnoyers' terms).
    Fifo,
    /// Uniform among candidates.
    Random,
    /// Fewest valid pages among `d` candidates sampled uniformly (with replacement).
    DChoices { d: u32 },
    /// Rosenblum–Ousterhout: maximise (1 − u)·age / (1 + u), u = valid / pages per block,
    /// age = now − close time (age of the block's youngest data).
    CostBenefit,
    /// Cost-age-times (Chiang, Lee, Chang): minimise u / (1 − u) · 1 / age · erases,
    /// with age and erases counted from 1.
    Cat,
    /// WECO (Tjioe et al. 2012) as far as it can be known: minimise
    /// (1 − w)·valid/pages + w·erases/(1 + max erases), a fixed weight `w`.
    Weco { weight: f64 },
    /// WPO-GC (seed 001): minimise (1 − a)·valid/pages + a·erases/(1 + max),
    /// a = 2 / (1 + e^(k/Δε)) for Δε = max − min > 0, else 0.
    Wpo { k: f64 },
    /// A policy outside the crate ([`crate::ExternalVictim`], e.g. a Python callable),
    /// asked by the FTL itself; not selectable by name in a config file.
    External,
}

impl VictimPolicy {
    pub const NAMES: [&'static str; 8] =
        ["greedy", "fifo", "random", "d-choices", "cost-benefit", "cat", "weco", "wpo"];

    /// Parse a policy name with default parameters; `d` is used by `d-choices`.
    pub fn from_name(name: &str, d: u32) -> Result<Self, FtlError> {
        match name {
            "cat" => Ok(Self::Cat),
            "weco" => Ok(Self::Weco { weight: 0.5 }),
            "wpo" => Ok(Self::Wpo { k: 10.0 }),
            "greedy" => Ok(Self::Greedy),
            "fifo" => Ok(Self::Fifo),
            "random" => Ok(Self::Random),
            "d-choices" if d == 0 => Err(FtlError::DChoices),
            "d-choices" => Ok(Self::DChoices { d }),
            "cost-benefit" => Ok(Self::CostBenefit),
            other => Err(FtlError::UnknownVictim(other.to_string())),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Self::Greedy => "greedy",
            Self::Fifo => "fifo",
            Self::Random => "random",
            Self::DChoices { .. } => "d-choices",
            Self::CostBenefit => "cost-benefit",
            Self::Cat => "cat",
            Self::Weco { .. } => "weco",
            Self::Wpo { .. } => "wpo",
            Self::External => "external",
        }
    }
    /// Whether the FTL must keep the valid-count bucket index.
    /// (An external policy gets its candidates in the greedy index's order.)
    pub fn needs_buckets(&self) -> bool {
        matches!(self, Self::Greedy | Self::External)
    }
    /// Whether the FTL must keep the FIFO queue of closed blocks.
    pub fn needs_fifo(&self) -> bool {
        matches!(self, Self::Fifo)
    }
}

/// Uniform integer in `0..n` (Lemire's multiply-shift; n > 0).
#[inline]
pub(crate) fn below(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

impl VictimSelector for VictimPolicy {
    fn choose<V: BlockView>(&self, view: &V, rng: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let c = view.candidates();
        if c.is_empty() {
            return None;
        }
        match *self {
            Self::Greedy => view.min_valid(),
            Self::Fifo => view.oldest(),
            Self::Random => Some(c[below(rng, c.len())]),
            Self::DChoices { d } => d_choices(view, rng, d),
            Self::CostBenefit => cost_benefit(view),
            Self::Cat => lowest(view, cat_score),
            Self::Weco { weight } => {
                let (_, max) = view.erase_range();
                lowest(view, |i, ppb, _| weighted_score(i, ppb, max, weight))
            }
            Self::Wpo { k } => {
                let (min, max) = view.erase_range();
                let a = wpo_weight(k, max - min);
                lowest(view, |i, ppb, _| weighted_score(i, ppb, max, a))
            }
            // The FTL asks the callback itself (gc.rs); a bare view has none to ask.
            Self::External => None,
        }
    }
}

fn d_choices<V: BlockView>(view: &V, rng: &mut Xoshiro256PlusPlus, d: u32) -> Option<u32> {
    let c = view.candidates();
    (0..d).map(|_| c[below(rng, c.len())]).min_by_key(|&b| view.info(b).valid)
}

/// The Rosenblum–Ousterhout benefit/cost ratio of one block.
pub fn cost_benefit_score(info: BlockInfo, pages_per_block: u32, now: u64) -> f64 {
    let u = info.valid as f64 / pages_per_block as f64;
    let age = now.saturating_sub(info.close_time) as f64;
    (1.0 - u) * age / (1.0 + u)
}

fn cost_benefit<V: BlockView>(view: &V) -> Option<u32> {
    let (ppb, now) = (view.pages_per_block(), view.now());
    let mut best: Option<(f64, u32)> = None;
    for &b in view.candidates() {
        let s = cost_benefit_score(view.info(b), ppb, now);
        // Ties: the lower block id, so the choice does not depend on candidate order.
        if best.is_none_or(|(bs, bb)| s > bs || (s == bs && b < bb)) {
            best = Some((s, b));
        }
    }
    best.map(|(_, b)| b)
}

/// The candidate with the lowest score (ties: the lower block id).
fn lowest<V: BlockView>(view: &V, score: impl Fn(BlockInfo, u32, u64) -> f64) -> Option<u32> {
    let (ppb, now) = (view.pages_per_block(), view.now());
    let mut best: Option<(f64, u32)> = None;
    for &b in view.candidates() {
        let s = score(view.info(b), ppb, now);
        if best.is_none_or(|(bs, bb)| s < bs || (s == bs && b < bb)) {
            best = Some((s, b));
        }
    }
    best.map(|(_, b)| b)
}

/// CAT's cleaning cost: u / (1 − u) · 1 / age · erases (age and erases from 1).
pub fn cat_score(info: BlockInfo, pages_per_block: u32, now: u64) -> f64 {
    let u = info.valid as f64 / pages_per_block as f64;
    let age = (now.saturating_sub(info.close_time) + 1) as f64;
    if u >= 1.0 {
        return f64::INFINITY;
    }
    u / (1.0 - u) / age * (info.erase_count as f64 + 1.0)
}

/// (1 − a)·valid/pages + a·erases/(1 + max): WECO's and WPO's score, lower is better.
pub fn weighted_score(info: BlockInfo, pages_per_block: u32, max_erases: u32, a: f64) -> f64 {
    (1.0 - a) * info.valid as f64 / pages_per_block as f64 + a * info.erase_count as f64 / (1.0 + max_erases as f64)
}

/// WPO-GC's wear weight a(Δε) = 2 / (1 + e^(k/Δε)) for Δε > 0, else 0.
pub fn wpo_weight(k: f64, spread: u32) -> f64 {
    if spread == 0 {
        0.0
    } else {
        2.0 / (1.0 + (k / spread as f64).exp())
    }
}
