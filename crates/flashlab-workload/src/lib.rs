//! Seeded synthetic workloads for flashlab. A [`Synthetic`] generator is an
//! iterator of [`flashlab_trace::Request`]s, the same type the trace readers
//! produce, so the simulation driver treats both alike.
//!
//! Every random choice comes from one seed; [`sub_seed`] derives independent
//! streams for each component from it.

mod arrival;
pub mod settings;
mod synthetic;

pub use arrival::ArrivalGen;
pub use settings::{Arrival, Pattern, SyntheticSettings};
pub use synthetic::Synthetic;

/// SplitMix64 finaliser: a well-mixed 64-bit permutation.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An independent seed for the component named `stream`, derived from the run's seed.
pub fn sub_seed(seed: u64, stream: &str) -> u64 {
    let h = stream.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x1000_0000_01B3));
    mix64(seed ^ mix64(h))
}
