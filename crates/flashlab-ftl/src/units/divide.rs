//! Division by the units' run-time constants (S blocks a unit, the plane groups, U pages
//! a unit), which every lookup, write and merge does several times
//! ([`super::Units::split`], [`super::Units::block`], [`super::Units::page_at`]). A
//! hardware division costs tens of cycles; the geometries in use have powers of two
//! there, so a shift and a mask do, with the division kept for the others. The same
//! quotient and remainder either way (test below).

/// A run-time divisor `d > 0`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Divisor {
    d: u64,
    shift: u32,
    /// `d − 1`, the remainder's mask when `d` is a power of two.
    mask: u64,
    pow2: bool,
}

impl Divisor {
    pub fn new(d: u32) -> Self {
        assert!(d > 0, "a divisor of zero");
        Divisor { d: d as u64, shift: d.trailing_zeros(), mask: d as u64 - 1, pow2: d.is_power_of_two() }
    }

    /// `(x / d, x % d)`.
    #[inline]
    pub fn div_rem(self, x: u64) -> (u64, u64) {
        if self.pow2 {
            (x >> self.shift, x & self.mask)
        } else {
            (x / self.d, x % self.d)
        }
    }

    /// `(x / d, x % d)` of a `u32`.
    #[inline]
    pub fn div_rem32(self, x: u32) -> (u32, u32) {
        if self.pow2 {
            (x >> self.shift, x & self.mask as u32)
        } else {
            (x / self.d as u32, x % self.d as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn div_rem_is_division(d in 1u32..300, shift in 0u32..12, x in any::<u64>(), pow2 in any::<bool>()) {
            let d = if pow2 { 1 << shift } else { d };
            prop_assert_eq!(Divisor::new(d).div_rem(x), (x / d as u64, x % d as u64));
            let x = x as u32;
            prop_assert_eq!(Divisor::new(d).div_rem32(x), (x / d, x % d));
        }
    }
}
