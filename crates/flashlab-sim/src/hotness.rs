//! `flashlab hotness`: run a workload's writes through several hot-data identifiers side
//! by side, score them against the window oracle, and optionally measure the WAF of the
//! page FTL when each identifier splits host writes into a hot and a cold stream.

use crate::addr::AddrMap;
use crate::settings::{DeviceMode, Settings, Source};
use crate::SimError;
use flashlab_ftl::PageFtl;
use flashlab_hotdata::{evaluate_with_warmup, HotDataIdentifier, Identifier, IdentifierSpec, WindowOracle};
use flashlab_nand::OpKind;
use flashlab_trace::{Op, Request};
use serde::Serialize;
use std::fmt::Display;

/// One identifier's scores (the `hotness --json` entries).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HotnessRow {
    pub name: String,
    pub false_hot_rate: f64,
    pub false_cold_rate: f64,
    pub memory_bytes: usize,
    /// Filled by the caller, which owns the clock.
    pub ns_per_write: Option<f64>,
    pub queries: u64,
    pub false_hot: u64,
    pub false_cold: u64,
    pub oracle_hot: u64,
    pub identifier_hot: u64,
    /// WAF of the page FTL with this identifier's hot/cold split (when asked).
    pub waf: Option<f64>,
}

/// The logical page of every host write of `requests`, in order (reads and trims dropped).
pub fn write_pages<I, E>(s: &Settings, requests: I) -> Result<Vec<u64>, SimError>
where
    I: Iterator<Item = Result<Request, E>>,
    E: Display,
{
    let (devices, device_count) = match &s.workload.source {
        Source::Trace(t) => (t.devices, t.device_count.max(1) as u64),
        Source::Synthetic(_) => (DeviceMode::Fold, 1),
    };
    let page_bytes = s.page_bytes();
    let map = AddrMap {
        page_bytes,
        page_shift: page_bytes.is_power_of_two().then(|| page_bytes.trailing_zeros()),
        logical_pages: s.ftl.logical_pages,
        overflow: s.workload.overflow,
        devices,
        device_count,
    };
    let mut out = Vec::new();
    for (index, req) in requests.enumerate() {
        let req = req.map_err(|e| SimError::Source(e.to_string()))?;
        if req.op != Op::Write {
            continue;
        }
        let capacity = s.ftl.logical_pages;
        let span = map.span(&req).map_err(|page| SimError::Overflow { index: index as u64, page, capacity })?;
        out.extend((0..span.count).map(|i| map.page(span, i, req.device)));
    }
    Ok(out)
}

/// The configured identifiers, each seeded from the run's seed.
pub fn build_identifiers(s: &Settings) -> Result<Vec<Identifier>, SimError> {
    s.hotness.identifiers.iter().enumerate().map(|(i, spec)| build(s, spec, i)).collect()
}

fn build(s: &Settings, spec: &IdentifierSpec, index: usize) -> Result<Identifier, SimError> {
    let seed = flashlab_workload::sub_seed(s.workload.seed, &format!("hotness/{index}"));
    spec.build(seed, s.ftl.logical_pages).map_err(|e| SimError::Source(format!("hotness.identifiers[{index}]: {e}")))
}

/// Score every configured identifier on `writes` (after `hotness.warmup_writes`).
pub fn accuracy(s: &Settings, writes: &[u64]) -> Result<Vec<HotnessRow>, SimError> {
    let mut ids = build_identifiers(s)?;
    let seed = flashlab_workload::sub_seed(s.workload.seed, "hotness/oracle");
    let mut oracle =
        WindowOracle::new(&s.hotness.oracle, seed).map_err(|e| SimError::Source(format!("hotness oracle: {e}")))?;
    let acc = evaluate_with_warmup(writes.iter().copied(), s.hotness.warmup_writes, &mut ids, &mut oracle);
    Ok(acc
        .into_iter()
        .map(|a| HotnessRow {
            name: a.name,
            false_hot_rate: a.false_hot_rate,
            false_cold_rate: a.false_cold_rate,
            memory_bytes: a.memory_bytes,
            ns_per_write: None,
            queries: a.queries,
            false_hot: a.false_hot,
            false_cold: a.false_cold,
            oracle_hot: a.oracle_hot,
            identifier_hot: a.identifier_hot,
            waf: None,
        })
        .collect())
}

/// WAF of the page FTL (counting mode) when identifier `index` sends each host write
/// to a hot or a cold stream. The device is prefilled if `workload.prefill`; WAF counts
/// the writes after `hotness.warmup_writes`.
pub fn separation_waf(s: &Settings, index: usize, writes: &[u64]) -> Result<f64, SimError> {
    let mut id = build(s, &s.hotness.identifiers[index], index)?;
    let mut ftl_settings = s.ftl.clone();
    ftl_settings.host_streams = 2;
    let mut ftl = PageFtl::new(s.geometry, ftl_settings);
    if s.workload.prefill {
        (0..s.ftl.logical_pages).try_for_each(|l| ftl.write(l).map(|_| ()))?;
    }
    let warm = (s.hotness.warmup_writes as usize).min(writes.len());
    let mut start = (*ftl.nand().counters(), ftl.stats().host_write_pages);
    for (i, &lpn) in writes.iter().enumerate() {
        if i == warm {
            start = (*ftl.nand().counters(), ftl.stats().host_write_pages);
        }
        let hot = id.record_and_query(lpn);
        ftl.write_stream(lpn, hot as u32)?;
    }
    let programs = ftl.nand().counters().since(&start.0).total(OpKind::Program);
    let host = ftl.stats().host_write_pages - start.1;
    Ok(if host == 0 { f64::NAN } else { programs as f64 / host as f64 })
}

/// Every request of the configured synthetic workload (warm-up included).
pub fn synthetic_requests(s: &Settings) -> Option<flashlab_workload::Synthetic> {
    let Source::Synthetic(syn) = &s.workload.source else { return None };
    let mut syn = syn.clone();
    syn.requests += s.workload.warmup;
    Some(flashlab_workload::Synthetic::new(
        syn,
        s.workload.arrival,
        s.ftl.logical_pages,
        s.page_bytes(),
        s.workload.seed,
    ))
}
