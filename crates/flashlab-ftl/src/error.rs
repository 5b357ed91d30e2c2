use thiserror::Error;

/// Errors of the FTL. A logically impossible state is a panic instead (a bug).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FtlError {
    #[error("logical page {lpn} is beyond the logical capacity of {capacity} pages")]
    OutOfRange { lpn: u64, capacity: u64 },
    #[error("plane {plane} is full: no block can be reclaimed (every closed block holds only valid pages); raise device.spare_factor")]
    NoSpace { plane: u32 },
    #[error("invalid stripe order {0:?}: expected a permutation of the letters c (channel), w (chip/way), d (die), p (plane), e.g. \"cwdp\"")]
    StripeOrder(String),
    #[error("unknown GC victim policy {0:?}; valid: greedy, fifo, random, d-choices, cost-benefit, cat, weco, wpo")]
    UnknownVictim(String),
    #[error("external GC victim policy: {0}")]
    ExternalVictim(String),
    #[error("gc.d_choices must be at least 1")]
    DChoices,
    #[error("write stream {stream} does not exist: the FTL has {streams} host streams")]
    Stream { stream: u32, streams: u32 },
    #[error("{0}")]
    Mapping(String),
    #[error("invariant violated: {0}")]
    Invariant(String),
}
