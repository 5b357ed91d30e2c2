//! `ftl.mapping` and the keys of the non-page schemes: validation, and warnings for
//! settings that cannot apply to the chosen scheme.

use crate::raw::RawConfig;
use crate::resolve::one_of;
use crate::ConfigError;
use flashlab_ftl::{DftlVariant, LogVictim, MappingSettings, Scheme};
use flashlab_nand::Geometry;

/// Whether dotted `key` has an effect under `scheme` (keys outside the list always do).
fn applies(scheme: Scheme, key: &str) -> bool {
    let page_gc = ["gc.", "placement.", "wear."].iter().any(|p| key.starts_with(p))
        || ["ftl.stripe_order", "ftl.separate_gc_frontier", "ftl.host_streams", "ftl.gc_streams"].contains(&key);
    match key {
        _ if page_gc => scheme.has_page_gc(),
        "ftl.log_blocks" | "ftl.log_victim" => matches!(scheme, Scheme::Bast | Scheme::BastPadding | Scheme::Fast),
        "ftl.fast_seq_log_blocks" => scheme == Scheme::Fast,
        "ftl.superblock_blocks" => scheme.is_hybrid(),
        "ftl.map_cache_entries" | "ftl.map_entry_bytes" | "ftl.dftl_variant" => scheme == Scheme::Dftl,
        _ => true,
    }
}

impl RawConfig {
    fn scheme(&self) -> Result<Scheme, ConfigError> {
        let available: Vec<_> = Scheme::NAMES.iter().copied().filter(|(_, s)| s.available()).collect();
        one_of("ftl.mapping", &self.ftl.mapping, &available)
    }

    /// `ftl.mapping` and its keys, validated against the geometry.
    pub(crate) fn mapping(&self, g: &Geometry, logical_pages: u64) -> Result<MappingSettings, ConfigError> {
        let f = &self.ftl;
        let scheme = self.scheme()?;
        let m = MappingSettings {
            scheme,
            log_blocks: f.log_blocks,
            log_victim: one_of(
                "ftl.log_victim",
                &f.log_victim,
                &[("lru", LogVictim::Lru), ("fifo", LogVictim::Fifo), ("random", LogVictim::Random)],
            )?,
            fast_seq_log_blocks: f.fast_seq_log_blocks,
            map_cache_entries: f.map_cache_entries,
            map_entry_bytes: f.map_entry_bytes,
            dftl_variant: one_of("ftl.dftl_variant", &f.dftl_variant, &DftlVariant::NAMES)?,
            superblock_blocks: f.superblock_blocks,
        };
        if f.map_cache_entries == 0 {
            return Err(ConfigError::invalid("ftl.map_cache_entries", 0, "expected at least 1 cached mapping entry"));
        }
        if f.map_entry_bytes == 0 || f.map_entry_bytes > g.page_bytes {
            return Err(ConfigError::invalid(
                "ftl.map_entry_bytes",
                f.map_entry_bytes,
                format!("expected 1 to device.page_bytes = {}", g.page_bytes),
            ));
        }
        if ![1, 2, 4, 8].contains(&f.superblock_blocks) {
            return Err(ConfigError::invalid("ftl.superblock_blocks", f.superblock_blocks, "expected 1, 2, 4 or 8"));
        }
        if scheme.is_hybrid() {
            self.check_units(g, logical_pages, scheme)?;
        }
        Ok(m)
    }

    /// Block-mapped schemes: superblocks divide the planes; the logical space, the log
    /// pool and one merge destination fit in the mapping units.
    fn check_units(&self, g: &Geometry, logical_pages: u64, scheme: Scheme) -> Result<(), ConfigError> {
        let f = &self.ftl;
        if !g.planes().is_multiple_of(f.superblock_blocks) {
            return Err(ConfigError::invalid(
                "ftl.superblock_blocks",
                f.superblock_blocks,
                format!("does not divide the device's {} planes", g.planes()),
            ));
        }
        let units = (g.planes() / f.superblock_blocks) as u64 * g.blocks_per_plane as u64;
        let lbns = logical_pages.div_ceil((f.superblock_blocks * g.pages_per_block) as u64);
        let spare = units.saturating_sub(lbns);
        if spare < 2 {
            return Err(ConfigError::invalid(
                "device.spare_factor",
                self.device.spare_factor,
                format!("leaves {spare} spare mapping units; ftl.mapping = \"{}\" needs at least 2", scheme.name()),
            ));
        }
        if scheme == Scheme::Block {
            return Ok(());
        }
        if f.log_blocks == 0 || f.log_blocks as u64 > spare - 1 {
            return Err(ConfigError::invalid(
                "ftl.log_blocks",
                f.log_blocks,
                format!("expected 1 to {} (the device's {spare} spare mapping units less one for merges)", spare - 1),
            ));
        }
        if scheme == Scheme::Fast && (f.fast_seq_log_blocks == 0 || f.fast_seq_log_blocks >= f.log_blocks) {
            return Err(ConfigError::invalid(
                "ftl.fast_seq_log_blocks",
                f.fast_seq_log_blocks,
                format!("expected 1 to ftl.log_blocks - 1 = {} (FAST needs a random log block)", f.log_blocks - 1),
            ));
        }
        Ok(())
    }

    /// One line per setting that differs from its default but cannot apply to the
    /// chosen `ftl.mapping` (e.g. `gc.victim` under `bast`).
    pub fn warnings(&self) -> Vec<String> {
        let Ok(scheme) = self.scheme() else { return Vec::new() };
        let (now, def) = (leaves(self), leaves(&RawConfig::default()));
        now.into_iter()
            .filter(|(k, v)| !applies(scheme, k) && def.iter().find(|(d, _)| d == k).is_none_or(|(_, dv)| dv != v))
            .map(|(k, v)| {
                format!("warning: {k} = {v} does not apply to ftl.mapping = \"{}\" and is ignored", scheme.name())
            })
            .collect()
    }
}

/// Dotted keys and values of a configuration.
fn leaves(raw: &RawConfig) -> Vec<(String, String)> {
    fn walk(v: &toml::Value, prefix: &str, out: &mut Vec<(String, String)>) {
        match v.as_table() {
            Some(t) => t
                .iter()
                .for_each(|(k, v)| walk(v, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out)),
            None => out.push((prefix.to_string(), v.to_string())),
        }
    }
    let mut out = Vec::new();
    walk(&toml::Value::try_from(raw).expect("config serialises"), "", &mut out);
    out
}
