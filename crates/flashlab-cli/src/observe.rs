//! The CLI's run observer: progress bar, per-request CSV log, interval time series.

use crate::series::{Series, SERIES_COLUMNS};
use anyhow::Context;
use flashlab_sim::{Observer, RequestRecord};
use indicatif::ProgressBar;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub struct CliObserver {
    pub bar: ProgressBar,
    log: Option<BufWriter<File>>,
    series: Option<(BufWriter<File>, Series)>,
    pub error: Option<std::io::Error>,
}

fn create(path: &Path, header: &str) -> anyhow::Result<BufWriter<File>> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(f);
    writeln!(w, "{header}")?;
    Ok(w)
}

impl CliObserver {
    pub fn new(bar: ProgressBar, log: Option<&Path>, series: Option<&Path>, every: u64) -> anyhow::Result<Self> {
        let log = log
            .map(|p| create(p, "index,measured,op,offset_bytes,pages,issue_ns,done_ns,latency_ns,gc_wait_ns"))
            .transpose()?;
        let header = SERIES_COLUMNS.join(",");
        let series = series.map(|p| create(p, &header).map(|w| (w, Series::new(every)))).transpose()?;
        Ok(CliObserver { bar, log, series, error: None })
    }

    fn write_log(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        let Some(w) = &mut self.log else { return Ok(()) };
        let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        let lat = r.issue_ns.zip(r.done_ns).map(|(i, d)| d - i);
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{}",
            r.index,
            r.measured as u8,
            r.op.name(),
            r.offset_bytes,
            r.pages,
            opt(r.issue_ns),
            opt(r.done_ns),
            opt(lat),
            r.gc_wait_ns
        )
    }

    fn add_series(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        let Some((w, series)) = &mut self.series else { return Ok(()) };
        let Some(p) = series.add(r) else { return Ok(()) };
        let f = |v: Option<f64>, digits: usize| v.map_or(String::new(), |x| format!("{x:.digits$}"));
        writeln!(
            w,
            "{},{},{},{},{},{}",
            p.requests,
            f(p.sim_time_s, 6),
            f(p.waf, 4),
            f(p.read_latency_us_mean, 3),
            f(p.write_latency_us_mean, 3),
            f(p.gc_wait_us_mean, 3)
        )
    }

    /// Flush the files; report the first write error.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.bar.finish_and_clear();
        if let Some(e) = self.error.take() {
            return Err(e.into());
        }
        if let Some(w) = &mut self.log {
            w.flush()?;
        }
        if let Some((w, _)) = &mut self.series {
            w.flush()?;
        }
        Ok(())
    }
}

impl Observer for CliObserver {
    fn progress(&mut self, done: u64) {
        self.bar.set_position(done);
    }
    fn wants_requests(&self) -> bool {
        self.log.is_some() || self.series.is_some()
    }
    fn request(&mut self, r: &RequestRecord) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.write_log(r).and_then(|_| self.add_series(r)) {
            self.error = Some(e);
        }
    }
}
