//! PNG plots (plotters, with a bundled DejaVu Sans so no system font library is needed).

use anyhow::anyhow;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

pub(crate) fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font is valid; a failure here would only lose the text.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plot: {e:?}")
}

/// A white canvas of `size` pixels for `path`, fonts registered.
fn canvas(path: &Path, size: (u32, u32)) -> anyhow::Result<DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>> {
    fonts();
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    Ok(root)
}

/// The common frame of every chart: a caption, margins and label areas.
fn frame<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, BitMapBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 22)).margin(20).x_label_area_size(45).y_label_area_size(75);
    b
}

/// One labelled point of a scatter plot.
pub struct Point {
    pub label: String,
    pub x: f64,
    pub y: f64,
}

/// Scatter plot with a logarithmic x axis and a label beside each point.
pub fn scatter_logx(path: &Path, title: &str, x_desc: &str, y_desc: &str, points: &[Point]) -> anyhow::Result<()> {
    let root = canvas(path, (900, 600))?;
    let xs = points.iter().map(|p| p.x.max(1.0));
    let (xmin, xmax) = xs.clone().fold((f64::MAX, 1.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let ymax = points.iter().map(|p| p.y).fold(0.0f64, f64::max).max(1e-3) * 1.15;
    let mut chart =
        frame(&root, title).build_cartesian_2d((xmin / 2.0..xmax * 20.0).log_scale(), 0.0..ymax).map_err(err)?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).label_style(("sans-serif", 14)).draw().map_err(err)?;
    chart.draw_series(points.iter().map(|p| Circle::new((p.x.max(1.0), p.y), 6, BLUE.filled()))).map_err(err)?;
    chart
        .draw_series(points.iter().map(|p| Text::new(p.label.clone(), (p.x.max(1.0) * 1.15, p.y), ("sans-serif", 14))))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Grouped bar chart: one group per category, one bar per series.
#[allow(dead_code)] // used by the reproductions
pub fn grouped_bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<()> {
    let root = canvas(path, (1000, 600))?;
    let ymax =
        series.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1e-9)
            * 1.2;
    let n = categories.len().max(1) as f64;
    let mut chart = frame(&root, title).build_cartesian_2d(0.0..n, 0.0..ymax).map_err(err)?;
    let cats = categories.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2 * categories.len().max(1) + 1)
        // Ticks fall on half units: name a group at its centre (k + 0.5), nothing elsewhere.
        .x_label_formatter(&move |x| {
            let half = (x * 2.0).round() as i64;
            if half % 2 == 1 {
                cats.get((half / 2) as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    let width = 0.8 / series.len().max(1) as f64;
    for (si, (name, values)) in series.iter().enumerate() {
        let color = Palette99::pick(si).mix(0.9);
        let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(move |(ci, &v)| {
            let x0 = ci as f64 + 0.1 + si as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width * 0.95, v)], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], Palette99::pick(si).filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Line plot: one line (with point markers) per series of (x, y) points.
#[allow(dead_code)] // used by the reproductions
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> anyhow::Result<()> {
    let root = canvas(path, (1000, 600))?;
    let pts = || series.iter().flat_map(|(_, v)| v.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let xmax = pts().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let ymax = pts().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let mut chart = frame(&root, title).build_cartesian_2d(0.0..xmax, 0.0..ymax).map_err(err)?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).label_style(("sans-serif", 14)).draw().map_err(err)?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = Palette99::pick(i);
        let pts: Vec<(f64, f64)> = points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], Palette99::pick(i).stroke_width(2)));
        chart.draw_series(pts.into_iter().map(move |p| Circle::new(p, 3, Palette99::pick(i).filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
