//! `flashlab run --report/--plot` and `reproduce`'s index.html: determinism, bad
//! output paths, and rendering in headless Chromium (skipped where it is missing).

use super::{fails, ok, tmp};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A small timed run with GC, reads, warm-up and queueing: every plot has data.
const CONFIG: &str = "[device]\nblocks_per_plane = 64\nspare_factor = 0.1\n\
[workload]\npattern = \"hotcold\"\nrequests = 20000\nwarmup = 2000\nread_fraction = 0.3\nprefill = true\nqueue_depth = 4\n";

/// The figures a timed run draws.
const FIGURES: [&str; 8] = [
    "latency-cdf",
    "throughput",
    "waf",
    "gc-activity",
    "latency-over-time",
    "erase-histogram",
    "plane-heat",
    "programs-by-cause",
];

fn report(config: &Path, dir: &Path, extra: &[&str]) {
    let mut args = vec!["run", config.to_str().unwrap(), "--quiet", "--report", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok(&args);
}

#[test]
fn report_and_plots_are_deterministic_and_self_contained() {
    let (d, cfg) = tmp("c.toml", CONFIG);
    let (a, b, p) = (d.path().join("a"), d.path().join("b"), d.path().join("png"));
    report(&cfg, &a, &["--plot", p.to_str().unwrap()]);
    report(&cfg, &b, &[]);
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert_eq!(html, std::fs::read_to_string(b.join("report.html")).unwrap(), "same run, same bytes");
    for id in FIGURES {
        assert!(html.contains(&format!("<figure class=\"plot\" id=\"fig-{id}\">\n<svg")), "{id} missing");
        let png = std::fs::read(p.join(format!("{id}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 5000, "{id}.png");
    }
    assert_eq!(html.matches("<figure class=\"plot\"").count(), FIGURES.len());
    // Self-contained: no link or source outside the page (the SVG namespace is a name, not a fetch).
    for bad in ["src=\"http", "href=\"http", "url(http", "@import", "wall_time_s\"", "<link"] {
        assert!(!html.contains(bad), "{bad}");
    }
    assert!(html.contains("default-src 'none'"), "a CSP forbids network access");
    assert!(html.contains("[device]") && html.contains("blocks_per_plane = 64"), "resolved config");
    // The PNGs are deterministic too.
    let q = d.path().join("png2");
    ok(&["run", cfg.to_str().unwrap(), "--quiet", "--plot", q.to_str().unwrap()]);
    for id in FIGURES {
        let f = format!("{id}.png");
        assert_eq!(std::fs::read(p.join(&f)).unwrap(), std::fs::read(q.join(&f)).unwrap(), "{f}");
    }
}

#[test]
fn counting_mode_report_notes_the_missing_plots() {
    let (d, cfg) = tmp("c.toml", &format!("{CONFIG}[timing]\nenabled = false\n"));
    let out = d.path().join("r");
    report(&cfg, &out, &[]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Request latency CDF: no data in this run."), "CDF noted");
    assert!(!html.contains("id=\"fig-throughput\""));
    assert!(html.contains("id=\"fig-waf\"") && html.contains("requests (counting mode)"));
}

#[test]
fn bad_report_or_plot_paths_fail_before_the_simulation() {
    // The trace is missing: a run that got as far as simulating would fail on it instead.
    let (d, cfg) = tmp("c.toml", "[workload]\nkind = \"trace\"\ntrace_path = \"missing.trace\"\n");
    let c = cfg.to_str().unwrap();
    let e = fails(&["run", c]);
    assert!(e.contains("workload.trace_path") && e.contains("cannot open"), "{e}");
    let file = d.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    for flag in ["--report", "--plot"] {
        let e = fails(&["run", c, flag, f]);
        assert!(e.contains(&format!("{flag} {f}: is a file, not a directory")), "{e}");
        let under = file.join("sub");
        let e = fails(&["run", c, flag, under.to_str().unwrap()]);
        assert!(e.contains(&format!("{flag} {}: cannot create the directory", under.display())), "{e}");
        // procfs takes no new files, not even from root.
        let e = fails(&["run", c, flag, "/proc"]);
        assert!(e.contains(&format!("{flag} /proc: the directory is not writable")), "{e}");
    }
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&ro, perm).unwrap();
    if std::fs::File::create(ro.join("probe")).is_ok() {
        eprintln!("note: running with rights that ignore directory modes (root); read-only folder check skipped");
    } else {
        let e = fails(&["run", c, "--report", ro.to_str().unwrap()]);
        assert!(e.contains("the directory is not writable"), "{e}");
    }
}

/// The headless browser, if installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!(
            "note: chromium not found on PATH; browser rendering checks skipped (Debian: apt-get install chromium)"
        );
    }
    found
}

/// Load `page` headless at a fixed window size; return (dumped DOM, console lines).
fn browse(chrome: &Path, page: &Path, extra: &[&str]) -> (String, Vec<String>) {
    let url = format!("file://{}", page.display());
    let out = Command::new(chrome)
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0"])
        .args(["--force-device-scale-factor=1", "--window-size=1100,14000", "--hide-scrollbars"])
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    let err = String::from_utf8_lossy(&out.stderr);
    let console = err.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// The `data-rect` (x, y, w, h) of every plot in the dumped DOM, by figure id.
fn plot_rects(dom: &str) -> Vec<(String, [u32; 4])> {
    dom.split("<figure class=\"plot\" id=\"fig-")
        .skip(1)
        .map(|f| {
            let id = f.split('"').next().unwrap().to_string();
            let rect = f.split("data-rect=\"").nth(1).expect("data-rect set by the page's script");
            let v: Vec<u32> = rect.split('"').next().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
            (id, [v[0], v[1], v[2], v[3]])
        })
        .collect()
}

/// Share of chromatic pixels (data in colour: axes, grid and text are grey) and the
/// number of distinct colours inside `r` of an RGB(A) screenshot.
fn ink(png: &Path, r: [u32; 4]) -> (f64, usize) {
    let dec = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let (mut inked, mut total) = (0u64, 0u64);
    let mut colours = std::collections::BTreeSet::new();
    for y in r[1]..(r[1] + r[3]).min(info.height) {
        for x in r[0]..(r[0] + r[2]).min(info.width) {
            let i = (y as usize * info.width as usize + x as usize) * ch;
            let px = (buf[i], buf[i + 1], buf[i + 2]);
            total += 1;
            let (hi, lo) = (px.0.max(px.1).max(px.2), px.0.min(px.1).min(px.2));
            inked += (hi - lo > 60) as u64;
            colours.insert(px);
        }
    }
    (inked as f64 / total.max(1) as f64, colours.len())
}

/// Each plot is in the DOM as drawn SVG/IMG, and its screen area holds a picture.
fn check_page(chrome: &Path, page: &Path, figures: &[&str], d: &Path) {
    let (dom, console) = browse(chrome, page, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains("data-ready=\"yes\""), "the page's script ran");
    assert!(dom.contains(&format!("data-plots=\"{}\"", figures.len())), "plot count");
    let rects = plot_rects(&dom);
    let ids: Vec<&str> = rects.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, figures);
    for part in dom.split("<figure class=\"plot\"").skip(1) {
        let fig = part.split("</figure>").next().unwrap();
        let drawn = fig.matches("<polyline").count() + fig.matches("<rect").count() + fig.matches("<img").count();
        assert!(drawn >= 1 && (fig.contains("<img") || fig.matches("<text").count() >= 8), "plot elements: {fig:.200}");
    }
    let shot = d.join("shot.png");
    let (_, console) = browse(chrome, page, &[&format!("--screenshot={}", shot.display())]);
    assert!(console.is_empty(), "console messages: {console:?}");
    for (id, r) in rects {
        assert!(r[2] >= 400 && r[3] >= 200, "{id} is laid out large enough: {r:?}");
        let (share, colours) = ink(&shot, r);
        eprintln!("{}: plot {id}: {share:.4} of pixels in colour, {colours} colours", page.display());
        assert!(share > 0.002 && colours >= 4, "{id}: {share:.4} of pixels in colour, {colours} colours");
    }
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(chrome) = chromium() else { return };
    let (d, cfg) = tmp("c.toml", CONFIG);
    // The check can fail: a page with a script error and a blocked fetch is caught.
    let bad = d.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><script>undefinedFn()</script><img src=\"http://192.0.2.1/x.png\">").unwrap();
    let (_, console) = browse(&chrome, &bad, &["--dump-dom"]);
    assert!(!console.is_empty(), "console errors are seen");
    let out = d.path().join("report");
    report(&cfg, &out, &[]);
    check_page(&chrome, &out.join("report.html"), &FIGURES, d.path());
}

/// `reproduce wpo-gc`'s index.html (called by the reproduction's test, which ran it into `out`).
pub fn reproduce_index_is_complete_and_renders(out: &Path, scratch: &Path) {
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<td>read response time</td><td>−20 % .. −40 %</td>"), "claims table");
    assert!(
        html.contains("Basic-GC: resolved config before the workload") && html.contains("workload overrides (--set)")
    );
    assert_eq!(html.matches("src=\"data:image/png;base64,").count(), 5);
    let Some(chrome) = chromium() else { return };
    let figs = ["fig6-read-response", "fig7-write-response", "fig8-erases", "fig9-page-writes", "fig10-erase-stddev"];
    check_page(&chrome, &out.join("index.html"), &figs, scratch);
}

/// The sweep page of `sweep_writes_one_row_per_run_and_resumes` (grid: spare factor
/// 0.1/0.25 and GC victim greedy/fifo, counting mode): a line chart for the numeric
/// key and a bar chart for the named one, per headline metric with data.
pub fn sweep_index_is_complete_and_renders(out: &Path, scratch: &Path) {
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let figs = [
        "sweep-device-spare-factor-waf",
        "sweep-device-spare-factor-nand-erases",
        "sweep-gc-victim-waf",
        "sweep-gc-victim-nand-erases",
    ];
    for id in figs {
        assert!(html.contains(&format!("<figure class=\"plot\" id=\"fig-{id}\">\n<svg")), "{id} missing");
    }
    assert_eq!(html.matches("<figure class=\"plot\"").count(), figs.len(), "one plot per swept key and metric");
    assert!(html.contains("<h2>Summary</h2>") && html.contains("<td>greedy</td>"), "summary table");
    assert!(html.contains("base config: base.toml") && html.contains("blocks_per_plane = 64"), "base config");
    assert!(html.contains("&quot;gc.victim&quot; = [&quot;greedy&quot;, &quot;fifo&quot;]"), "grid");
    for bad in ["src=\"http", "href=\"http", "wall_time_s", "<link"] {
        assert!(!html.contains(bad), "{bad}");
    }
    let Some(chrome) = chromium() else { return };
    check_page(&chrome, &out.join("index.html"), &figs, scratch);
}
