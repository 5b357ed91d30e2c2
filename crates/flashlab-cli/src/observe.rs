//! The CLI's run observer: progress bar, per-request CSV log, interval time series.

use anyhow::Context;
use flashlab_sim::{Observer, RequestRecord};
use indicatif::ProgressBar;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Per-interval accumulator of the time series.
#[derive(Default)]
struct Interval {
    requests: u64,
    read_ns: u64,
    reads: u64,
    write_ns: u64,
    writes: u64,
    gc_wait_ns: u64,
    host0: u64,
    nand0: u64,
}

pub struct CliObserver {
    pub bar: ProgressBar,
    log: Option<BufWriter<File>>,
    series: Option<(BufWriter<File>, u64, Interval)>,
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
        let header = "requests,sim_time_s,waf,read_latency_us_mean,write_latency_us_mean,gc_wait_us_mean";
        let series = series.map(|p| create(p, header).map(|w| (w, every.max(1), Interval::default()))).transpose()?;
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
        let Some((w, every, iv)) = &mut self.series else { return Ok(()) };
        if iv.requests == 0 {
            (iv.host0, iv.nand0) = (r.host_write_pages, r.nand_program_pages);
        }
        iv.requests += 1;
        iv.gc_wait_ns += r.gc_wait_ns;
        let lat = r.issue_ns.zip(r.done_ns).map_or(0, |(i, d)| d - i);
        match r.op {
            flashlab_trace::Op::Read => (iv.reads, iv.read_ns) = (iv.reads + 1, iv.read_ns + lat),
            flashlab_trace::Op::Write => (iv.writes, iv.write_ns) = (iv.writes + 1, iv.write_ns + lat),
            flashlab_trace::Op::Trim => {}
        }
        if iv.requests < *every {
            return Ok(());
        }
        let host = r.host_write_pages - iv.host0;
        let waf = if host > 0 {
            format!("{:.4}", (r.nand_program_pages - iv.nand0) as f64 / host as f64)
        } else {
            String::new()
        };
        let mean = |ns: u64, n: u64| {
            if n > 0 && r.done_ns.is_some() {
                format!("{:.3}", ns as f64 / n as f64 / 1e3)
            } else {
                String::new()
            }
        };
        let t = r.done_ns.map_or(String::new(), |d| format!("{:.6}", d as f64 / 1e9));
        writeln!(
            w,
            "{},{t},{waf},{},{},{}",
            r.index + 1,
            mean(iv.read_ns, iv.reads),
            mean(iv.write_ns, iv.writes),
            mean(iv.gc_wait_ns, iv.requests)
        )?;
        *iv = Interval::default();
        Ok(())
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
        if let Some((w, _, _)) = &mut self.series {
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
