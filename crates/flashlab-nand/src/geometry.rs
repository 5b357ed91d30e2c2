//! Device geometry: channel → chip → die → plane → block → page.

use serde::{Deserialize, Serialize};

/// The shape of a NAND device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
}

/// Why a geometry cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GeometryError {
    #[error("device.{field} must be at least 1, got 0")]
    Zero { field: &'static str },
    #[error("device.pages_per_block = {0} is too large (at most 65536 pages per block)")]
    PagesPerBlock(u32),
    #[error("device.page_bytes = {0} must be a multiple of 512")]
    PageBytes(u32),
    #[error("device.channels x chips_per_channel x dies_per_chip x planes_per_die x blocks_per_plane x pages_per_block = {} physical pages; at most {max} are supported (page ids are 32-bit)", if *pages == u64::MAX { "more than 2^64".to_string() } else { pages.to_string() })]
    TooLarge { pages: u64, max: u64 },
}

/// Where a plane sits in the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneAddr {
    pub channel: u32,
    pub chip: u32,
    pub die: u32,
    pub plane: u32,
}

/// Largest page id plus reserved sentinels must fit in `u32`.
pub const MAX_PAGES: u64 = (u32::MAX - 16) as u64;

impl Geometry {
    /// Check every field; the error names the offending `device.*` key.
    pub fn validate(&self) -> Result<(), GeometryError> {
        let fields = [
            ("channels", self.channels),
            ("chips_per_channel", self.chips_per_channel),
            ("dies_per_chip", self.dies_per_chip),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_bytes", self.page_bytes),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, v)| *v == 0) {
            return Err(GeometryError::Zero { field });
        }
        if self.pages_per_block > 65536 {
            return Err(GeometryError::PagesPerBlock(self.pages_per_block));
        }
        if !self.page_bytes.is_multiple_of(512) {
            return Err(GeometryError::PageBytes(self.page_bytes));
        }
        let pages = self.total_pages_u64();
        if pages > MAX_PAGES {
            return Err(GeometryError::TooLarge { pages, max: MAX_PAGES });
        }
        Ok(())
    }

    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    pub fn blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    /// Product of every level (saturating, so absurd geometries fail validation instead of wrapping).
    fn total_pages_u64(&self) -> u64 {
        [self.chips_per_channel, self.dies_per_chip, self.planes_per_die, self.blocks_per_plane, self.pages_per_block]
            .iter()
            .fold(self.channels as u64, |acc, &v| acc.saturating_mul(v as u64))
    }
    /// Physical pages in the device (validated geometries fit in `u32`).
    pub fn pages(&self) -> u32 {
        self.total_pages_u64() as u32
    }
    pub fn physical_bytes(&self) -> u64 {
        self.total_pages_u64() * self.page_bytes as u64
    }
    /// Plane index of a block id.
    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }
    /// Die index (flat, channel-major) of a plane index.
    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        plane / self.planes_per_die
    }
    /// Channel of a plane index.
    #[inline]
    pub fn channel_of_plane(&self, plane: u32) -> u32 {
        plane / (self.planes_per_die * self.dies_per_chip * self.chips_per_channel)
    }
    /// Hierarchical address of a plane index.
    pub fn plane_addr(&self, plane: u32) -> PlaneAddr {
        let p = plane % self.planes_per_die;
        let die_flat = plane / self.planes_per_die;
        let d = die_flat % self.dies_per_chip;
        let chip_flat = die_flat / self.dies_per_chip;
        PlaneAddr {
            channel: chip_flat / self.chips_per_channel,
            chip: chip_flat % self.chips_per_channel,
            die: d,
            plane: p,
        }
    }
    /// Plane index of a hierarchical address.
    pub fn plane_index(&self, a: PlaneAddr) -> u32 {
        ((a.channel * self.chips_per_channel + a.chip) * self.dies_per_chip + a.die) * self.planes_per_die + a.plane
    }
}

impl Default for Geometry {
    /// The contract's default device (SSDsim-like, seed 001): 4 × 2 × 2 × 2 × 1024 × 64 × 2 KiB.
    fn default() -> Self {
        Geometry {
            channels: 4,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 1024,
            pages_per_block: 64,
            page_bytes: 2048,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_4gib() {
        let g = Geometry::default();
        g.validate().unwrap();
        assert_eq!(g.physical_bytes(), 4 << 30);
        assert_eq!(g.planes(), 32);
    }

    #[test]
    fn plane_addr_round_trips() {
        let g =
            Geometry { channels: 3, chips_per_channel: 2, dies_per_chip: 5, planes_per_die: 2, ..Geometry::default() };
        for p in 0..g.planes() {
            let a = g.plane_addr(p);
            assert_eq!(g.plane_index(a), p);
            assert_eq!(g.channel_of_plane(p), a.channel);
            assert_eq!(g.die_of_plane(p), (a.channel * 2 + a.chip) * 5 + a.die);
        }
    }

    #[test]
    fn zero_field_is_named() {
        let g = Geometry { dies_per_chip: 0, ..Geometry::default() };
        assert_eq!(g.validate().unwrap_err().to_string(), "device.dies_per_chip must be at least 1, got 0");
    }

    #[test]
    fn too_large_is_rejected() {
        let g = Geometry { blocks_per_plane: 1 << 24, ..Geometry::default() };
        assert!(matches!(g.validate(), Err(GeometryError::TooLarge { .. })));
    }
}
