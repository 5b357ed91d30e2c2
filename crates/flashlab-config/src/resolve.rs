//! Stage 3: RawConfig → Settings, with every check that can be made before a run.

use crate::raw::*;
use crate::settings::*;
use crate::ConfigError;
use flashlab_ftl::{DtParams, FtlSettings, StripeOrder, Trigger, VictimPolicy, WearLevelling};
use flashlab_nand::Geometry;

pub(crate) fn one_of<T: Copy>(key: &'static str, value: &str, choices: &[(&str, T)]) -> Result<T, ConfigError> {
    choices.iter().find(|(n, _)| *n == value).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        ConfigError::invalid(key, format!("{value:?}"), format!("expected one of: {}", names.join(", ")))
    })
}

fn fraction(key: &'static str, v: f64) -> Result<f64, ConfigError> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(ConfigError::invalid(key, v, "expected a fraction from 0 to 1"))
    }
}

fn positive_time(key: &'static str, v: f64, scale: f64) -> Result<u64, ConfigError> {
    if v.is_finite() && v >= 0.0 && v * scale < 1e18 {
        Ok((v * scale).round() as u64)
    } else {
        Err(ConfigError::invalid(key, v, "expected a non-negative time"))
    }
}

impl RawConfig {
    /// Validate and convert to typed settings.
    pub fn resolve(&self) -> Result<Settings, ConfigError> {
        let geometry = self.device.geometry();
        geometry.validate()?;
        let spare = self.device.spare_factor;
        if !(0.0..1.0).contains(&spare) {
            return Err(ConfigError::invalid("device.spare_factor", spare, "expected 0 <= spare_factor < 1"));
        }
        let logical_pages = (geometry.pages() as f64 * (1.0 - spare)).floor() as u64;
        let mapping = self.mapping(&geometry, logical_pages)?;
        if mapping.scheme.has_page_gc() {
            self.check_spare(&geometry, logical_pages)?;
        }
        let mut ftl = self.resolve_ftl(logical_pages)?;
        ftl.mapping = mapping;
        // Checked in the order of the sections (the first bad key is reported).
        let timing = self.timing.resolve()?;
        let gc_mode = self.gc_mode()?;
        let buffer_pages = self.buffer_pages(geometry.page_bytes as u64, logical_pages)?;
        let hotness = self.hotness.resolve()?;
        // Validated with every run so a bad [flashfs] section fails early; the campaign
        // settings themselves belong to flashfs (see `resolve_flashfs`).
        self.resolve_flashfs()?;
        self.resolve_fs_bench()?;
        Ok(Settings {
            geometry,
            spare_factor: spare,
            timing,
            ftl,
            gc_mode,
            buffer_pages,
            hotness,
            workload: self.workload.resolve(geometry.page_bytes as u64, logical_pages)?,
        })
    }

    /// The DRAM buffer in pages; it may not hold more than the logical capacity.
    fn buffer_pages(&self, page_bytes: u64, logical_pages: u64) -> Result<u64, ConfigError> {
        let pages = self.buffer.bytes / page_bytes;
        if pages > logical_pages {
            let want = format!("expected at most the logical capacity, {} bytes", logical_pages * page_bytes);
            return Err(ConfigError::invalid("buffer.bytes", self.buffer.bytes, want));
        }
        Ok(pages)
    }

    fn check_spare(&self, g: &Geometry, logical_pages: u64) -> Result<(), ConfigError> {
        let spare_blocks = (g.pages() as u64 - logical_pages) / g.pages_per_block as u64 / g.planes() as u64;
        let gc_streams = if self.ftl.separate_gc_frontier { self.ftl.gc_streams as u64 } else { 0 };
        let need = self.gc.free_blocks_min as u64 + self.ftl.host_streams as u64 + gc_streams + 1;
        if spare_blocks < need {
            return Err(ConfigError::invalid(
                "device.spare_factor",
                self.device.spare_factor,
                format!(
                    "leaves {spare_blocks} spare blocks per plane; GC needs at least gc.free_blocks_min + \
                     ftl.host_streams + ftl.gc_streams + 1 = {need} (the free-block reserve, the host and GC frontiers, \
                     and a block to reclaim)"
                ),
            ));
        }
        Ok(())
    }

    fn gc_mode(&self) -> Result<GcMode, ConfigError> {
        let modes = [("blocking", false), ("preemptible", true)];
        if !one_of("gc.mode", &self.gc.mode, &modes)? {
            return Ok(GcMode::Blocking);
        }
        let bg = self.gc.background_free_blocks;
        if bg <= self.gc.free_blocks_min {
            let want = format!("expected more than gc.free_blocks_min = {}", self.gc.free_blocks_min);
            return Err(ConfigError::invalid("gc.background_free_blocks", bg, want));
        }
        Ok(GcMode::Preemptible { background_free_blocks: bg })
    }

    fn victim(&self) -> Result<VictimPolicy, ConfigError> {
        let g = &self.gc;
        let policy = VictimPolicy::from_name(&g.victim, g.d_choices).map_err(|e| match e {
            flashlab_ftl::FtlError::DChoices => ConfigError::from(e),
            e => ConfigError::Setting { key: "gc.victim".into(), message: e.to_string() },
        })?;
        Ok(match policy {
            VictimPolicy::Weco { .. } if !(0.0..=1.0).contains(&g.weco_weight) => {
                return Err(ConfigError::invalid("gc.weco_weight", g.weco_weight, "expected a weight from 0 to 1"))
            }
            VictimPolicy::Weco { .. } => VictimPolicy::Weco { weight: g.weco_weight },
            VictimPolicy::Wpo { .. } if !(g.wpo_k > 0.0 && g.wpo_k.is_finite()) => {
                return Err(ConfigError::invalid("gc.wpo_k", g.wpo_k, "expected a positive number"))
            }
            VictimPolicy::Wpo { .. } => VictimPolicy::Wpo { k: g.wpo_k },
            v => v,
        })
    }

    fn trigger(&self) -> Result<Trigger, ConfigError> {
        let g = &self.gc;
        match one_of(
            "gc.trigger",
            &g.trigger,
            &[("threshold", "threshold"), ("dt-gc", "dt-gc"), ("free-ratio", "free-ratio")],
        )? {
            "threshold" => return Ok(Trigger::Threshold),
            "free-ratio" if !(g.free_ratio_min > 0.0 && g.free_ratio_min < 1.0) => {
                return Err(ConfigError::invalid(
                    "gc.free_ratio_min",
                    g.free_ratio_min,
                    "expected a ratio above 0 and below 1",
                ))
            }
            "free-ratio" => return Ok(Trigger::FreeRatio { min: g.free_ratio_min }),
            _ => {}
        }
        if g.dt_check_pages == 0 {
            return Err(ConfigError::invalid("gc.dt_check_pages", 0, "expected at least 1"));
        }
        let coefficients = [
            ("gc.dt_a", g.dt_a),
            ("gc.dt_b", g.dt_b),
            ("gc.dt_big_a", g.dt_big_a),
            ("gc.dt_big_b", g.dt_big_b),
            ("gc.dt_c", g.dt_c),
        ];
        if let Some((k, v)) = coefficients.iter().find(|(_, v)| !(0.0..=1.0).contains(v)) {
            return Err(ConfigError::invalid(k, v, "expected a coefficient from 0 to 1"));
        }
        let e = if g.dt_e < 0.0 { self.device.spare_factor } else { g.dt_e };
        Ok(Trigger::DtGc(DtParams {
            a: g.dt_a,
            b: g.dt_b,
            big_a: g.dt_big_a,
            big_b: g.dt_big_b,
            c: g.dt_c,
            e,
            check_pages: g.dt_check_pages,
        }))
    }

    fn placement(&self) -> Result<Option<flashlab_hotdata::IdentifierSpec>, ConfigError> {
        if !self.placement.enabled {
            return Ok(None);
        }
        self.placement.identifier.validate().map_err(|e| {
            ConfigError::invalid("placement.identifier", self.placement.identifier.kind().name(), e.to_string())
        })?;
        Ok(Some(self.placement.identifier.clone()))
    }

    fn resolve_ftl(&self, logical_pages: u64) -> Result<FtlSettings, ConfigError> {
        if !(1..=64).contains(&self.ftl.host_streams) {
            return Err(ConfigError::invalid("ftl.host_streams", self.ftl.host_streams, "expected 1 to 64"));
        }
        if !(1..=64).contains(&self.ftl.gc_streams) {
            return Err(ConfigError::invalid("ftl.gc_streams", self.ftl.gc_streams, "expected 1 to 64"));
        }
        if self.gc.free_blocks_min == 0 {
            return Err(ConfigError::invalid("gc.free_blocks_min", 0, "expected at least 1"));
        }
        Ok(FtlSettings {
            logical_pages,
            free_blocks_min: self.gc.free_blocks_min,
            victim: self.victim()?,
            external_victim: None,
            gc_streams: self.ftl.gc_streams,
            trigger: self.trigger()?,
            background_max_valid: fraction("gc.background_max_valid", self.gc.background_max_valid)?,
            placement: self.placement()?,
            wear: WearLevelling {
                dynamic: self.wear.dynamic,
                static_threshold: self.wear.static_threshold,
                static_check_erases: self.wear.static_check_erases,
            },
            stripe: StripeOrder::parse(&self.ftl.stripe_order)
                .map_err(|e| ConfigError::Setting { key: "ftl.stripe_order".into(), message: e.to_string() })?,
            separate_gc_frontier: self.ftl.separate_gc_frontier,
            host_streams: self.ftl.host_streams,
            strict: self.sim.strict,
            track_content: self.sim.track_content || self.sim.strict,
            seed: self.workload.seed,
            mapping: Default::default(),
        })
    }
}

impl RawDevice {
    pub fn geometry(&self) -> Geometry {
        Geometry {
            channels: self.channels,
            chips_per_channel: self.chips_per_channel,
            dies_per_chip: self.dies_per_chip,
            planes_per_die: self.planes_per_die,
            blocks_per_plane: self.blocks_per_plane,
            pages_per_block: self.pages_per_block,
            page_bytes: self.page_bytes,
        }
    }
}

impl RawTiming {
    fn resolve(&self) -> Result<Option<TimingSettings>, ConfigError> {
        let t = TimingSettings {
            read_ns: positive_time("timing.read_us", self.read_us, 1e3)?,
            program_ns: positive_time("timing.program_us", self.program_us, 1e3)?,
            erase_ns: positive_time("timing.erase_ms", self.erase_ms, 1e6)?,
            byte_ps: positive_time("timing.byte_ns", self.byte_ns, 1e3)?,
            command_ns: positive_time("timing.command_ns", self.command_ns, 1.0)?,
            copyback: self.copyback,
            copyback_same_parity: self.copyback_same_parity,
            multiplane: self.multiplane,
            die_interleaving: self.die_interleaving,
            bus_arbitration: one_of(
                "timing.bus_arbitration",
                &self.bus_arbitration,
                &[("fifo", BusArbitration::Fifo), ("host-first", BusArbitration::HostFirst)],
            )?,
            trim_command_ns: positive_time("timing.trim_command_us", self.trim_command_us, 1e3)?,
            trim_page_ns: positive_time("timing.trim_page_ns", self.trim_page_ns, 1.0)?,
            trim_queued: self.trim_queued,
            pipeline: self.pipeline,
        };
        Ok(self.enabled.then_some(t))
    }
}

impl RawWorkload {
    fn resolve(&self, page_bytes: u64, logical_pages: u64) -> Result<WorkloadSettings, ConfigError> {
        let source = match one_of("workload.kind", &self.kind, &[("synthetic", false), ("trace", true)])? {
            false => Source::Synthetic(self.synthetic(page_bytes, logical_pages)?),
            true => Source::Trace(self.trace()?),
        };
        let arrival = self.arrival(matches!(source, Source::Trace(_)))?;
        let overflow = one_of(
            "workload.address_overflow",
            &self.address_overflow,
            &[("fold", Overflow::Fold), ("error", Overflow::Error)],
        )?;
        Ok(WorkloadSettings {
            source,
            arrival,
            seed: self.seed,
            prefill: self.prefill,
            aging_writes: self.aging_writes,
            warmup: self.warmup,
            overflow,
            prewrite_reads: self.prewrite_reads,
        })
    }

    fn synthetic(&self, page_bytes: u64, logical_pages: u64) -> Result<SyntheticSettings, ConfigError> {
        let pattern = match self.pattern.as_str() {
            "uniform" => Pattern::Uniform,
            "sequential" => Pattern::Sequential,
            "hotcold" => self.hotcold()?,
            "zipf" if self.zipf_theta > 0.0 && self.zipf_theta.is_finite() => Pattern::Zipf { theta: self.zipf_theta },
            "zipf" => {
                return Err(ConfigError::invalid("workload.zipf_theta", self.zipf_theta, "expected a positive number"))
            }
            other => {
                return Err(ConfigError::invalid(
                    "workload.pattern",
                    format!("{other:?}"),
                    "expected one of: uniform, hotcold, sequential, zipf",
                ))
            }
        };
        let (read, trim) = (
            fraction("workload.read_fraction", self.read_fraction)?,
            fraction("workload.trim_fraction", self.trim_fraction)?,
        );
        if read + trim > 1.0 {
            return Err(ConfigError::invalid(
                "workload.trim_fraction",
                trim,
                "expected read_fraction + trim_fraction <= 1",
            ));
        }
        if self.requests == 0 {
            return Err(ConfigError::invalid("workload.requests", 0, "expected at least 1"));
        }
        let capacity = logical_pages * page_bytes;
        for (key, v) in
            [("workload.request_bytes", self.request_bytes), ("workload.request_bytes_max", self.request_bytes_max)]
        {
            if v > capacity {
                return Err(ConfigError::invalid(
                    key,
                    v,
                    format!("expected at most the logical capacity, {capacity} bytes"),
                ));
            }
        }
        let bytes = if self.request_bytes == 0 { page_bytes } else { self.request_bytes };
        let pages_min = bytes.div_ceil(page_bytes);
        let pages_max = self.request_bytes_max.max(bytes).div_ceil(page_bytes);
        Ok(SyntheticSettings {
            pattern,
            requests: self.requests,
            read_fraction: read,
            trim_fraction: trim,
            pages_min,
            pages_max,
        })
    }

    fn hotcold(&self) -> Result<Pattern, ConfigError> {
        let hot_fraction = fraction("workload.hot_fraction", self.hot_fraction)?;
        if hot_fraction == 0.0 || hot_fraction == 1.0 {
            return Err(ConfigError::invalid("workload.hot_fraction", hot_fraction, "expected 0 < hot_fraction < 1"));
        }
        Ok(Pattern::HotCold { hot_fraction, hot_traffic: fraction("workload.hot_traffic", self.hot_traffic)? })
    }

    fn trace(&self) -> Result<TraceSettings, ConfigError> {
        if self.trace_path.is_empty() {
            return Err(ConfigError::invalid(
                "workload.trace_path",
                "\"\"",
                "workload.kind = \"trace\" needs a trace file path",
            ));
        }
        let devices = one_of(
            "workload.devices",
            &self.devices,
            &[("fold", DeviceMode::Fold), ("separate", DeviceMode::Separate)],
        )?;
        if self.device_count == 0 {
            return Err(ConfigError::invalid("workload.device_count", 0, "expected at least 1"));
        }
        let action = self.blkparse_action.as_bytes();
        if action.len() != 1 || !action[0].is_ascii_uppercase() {
            return Err(ConfigError::invalid(
                "workload.blkparse_action",
                format!("{:?}", self.blkparse_action),
                "expected one blkparse action letter, e.g. \"D\" (issued to the driver), \"Q\" (queued), \"C\" (completed)",
            ));
        }
        Ok(TraceSettings {
            blkparse_action: action[0] as char,
            path: self.trace_path.clone(),
            format: self.trace_format.clone(),
            devices,
            device_count: self.device_count,
            skip_bad_lines: self.skip_bad_lines,
        })
    }

    fn arrival(&self, trace: bool) -> Result<Arrival, ConfigError> {
        let kinds = [("closed", 0u8), ("fixed", 1), ("poisson", 2), ("trace", 3)];
        let interval = || match positive_time("workload.interarrival_us", self.interarrival_us, 1e3)? {
            0 => Err(ConfigError::invalid(
                "workload.interarrival_us",
                self.interarrival_us,
                "expected a positive time for an open-loop arrival",
            )),
            ns => Ok(ns),
        };
        match one_of("workload.arrival", &self.arrival, &kinds)? {
            0 if self.queue_depth == 0 => Err(ConfigError::invalid("workload.queue_depth", 0, "expected at least 1")),
            0 => Ok(Arrival::Closed { queue_depth: self.queue_depth }),
            1 => Ok(Arrival::Fixed { interval_ns: interval()? }),
            2 => Ok(Arrival::Poisson { mean_ns: interval()? }),
            _ if !trace => {
                Err(ConfigError::invalid("workload.arrival", "\"trace\"", "needs workload.kind = \"trace\""))
            }
            _ if !(self.time_scale > 0.0 && self.time_scale.is_finite()) => {
                Err(ConfigError::invalid("workload.time_scale", self.time_scale, "expected a positive factor"))
            }
            _ => Ok(Arrival::Trace { time_scale: self.time_scale }),
        }
    }
}

impl RawHotness {
    fn resolve(&self) -> Result<HotnessSettings, ConfigError> {
        for (index, spec) in self.identifiers.iter().enumerate() {
            spec.validate().map_err(|e| ConfigError::Identifier { index, message: e.to_string() })?;
        }
        let oracle = flashlab_hotdata::WindowOracleParams {
            window_writes: self.oracle_window_writes,
            min_writes: self.oracle_min_writes,
        };
        oracle.validate().map_err(|e| {
            let min_bad = self.oracle_min_writes == 0 || self.oracle_min_writes > self.oracle_window_writes;
            let (key, value) = match min_bad {
                true => ("hotness.oracle_min_writes", self.oracle_min_writes),
                false => ("hotness.oracle_window_writes", self.oracle_window_writes),
            };
            ConfigError::invalid(key, value, e.to_string())
        })?;
        Ok(HotnessSettings {
            identifiers: self.identifiers.clone(),
            oracle,
            warmup_writes: self.warmup_writes,
            waf: self.waf,
        })
    }
}

impl RawConfig {
    /// The `[flashfs]` section: the power-cut campaign of `flashlab fs powercut`, validated.
    pub fn resolve_flashfs(&self) -> Result<flashlab_flashfs::powercut::CampaignSettings, ConfigError> {
        let f = &self.flashfs;
        let key = |section: &str, field: &str, message: String| ConfigError::Setting {
            key: format!("{section}{field}"),
            message,
        };
        f.flash.validate().map_err(|e| key("flashfs.flash.", e.field, e.reason))?;
        f.ubi.validate().map_err(|e| key("flashfs.ubi.", e.field, e.reason))?;
        f.fs.validate().map_err(|e| key("flashfs.fs.", e.field, e.reason))?;
        f.validate().map_err(|e| key("flashfs.", e.field, e.reason))?;
        // UBI's format needs 8 eraseblocks (flashlab-ubi attach.rs, check_settings).
        if f.flash.blocks < 8 {
            let message = format!("{} is too few: UBI needs at least 8 eraseblocks", f.flash.blocks);
            return Err(ConfigError::Setting { key: "flashfs.flash.blocks".into(), message });
        }
        let raw_bytes = f.flash.blocks as u64 * f.flash.pages_per_block as u64 * f.flash.page_bytes as u64;
        if f.prefill_bytes as u64 >= raw_bytes {
            let message =
                format!("{} is not less than the raw flash size, {raw_bytes} bytes (flashfs.flash.*)", f.prefill_bytes);
            return Err(ConfigError::Setting { key: "flashfs.prefill_bytes".into(), message });
        }
        let written = f.prefill_bytes as u64 + f.prefill_dead_bytes as u64;
        if written >= raw_bytes {
            let message = format!(
                "{} plus flashfs.prefill_bytes = {} is not less than the raw flash size, {raw_bytes} bytes (flashfs.flash.*)",
                f.prefill_dead_bytes, f.prefill_bytes
            );
            return Err(ConfigError::Setting { key: "flashfs.prefill_dead_bytes".into(), message });
        }
        Ok(self.flashfs.clone())
    }
}
