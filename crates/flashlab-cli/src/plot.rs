//! PNG plots (plotters, with a bundled DejaVu Sans so no system font library is needed).

use crate::report::draw;
use crate::report::figure::{colour, Axis, Figure, Line, Plot};
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

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {}", e.to_string().replace('\n', " "))
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
    chart.draw_series(points.iter().map(|p| Circle::new((p.x.max(1.0), p.y), 6, colour(0).filled()))).map_err(err)?;
    chart
        .draw_series(points.iter().map(|p| Text::new(p.label.clone(), (p.x.max(1.0) * 1.15, p.y), ("sans-serif", 14))))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Grouped bar chart: one group per category, one bar per series (drawn by the
/// report module: Okabe–Ito colours, legend beside the plot, small bars labelled,
/// a log axis when the values span more than two decades).
#[allow(dead_code)] // used by the reproductions
pub fn grouped_bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<()> {
    let fig = Figure {
        id: String::new(),
        title: title.into(),
        caption: String::new(),
        plot: Plot::Bars {
            x_label: String::new(),
            y: Axis::auto(y_desc, series.iter().flat_map(|s| s.1.iter().copied()), 2.0),
            categories: categories.to_vec(),
            series: series.to_vec(),
        },
    };
    draw::png(&fig, path)
}

/// Line plot: one line per series of (x, y) points (drawn by the report module).
#[allow(dead_code)] // used by the reproductions
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> anyhow::Result<()> {
    let lines = series.iter().map(|(name, points)| Line { name: name.clone(), points: points.clone() }).collect();
    let fig = Figure {
        id: String::new(),
        title: title.into(),
        caption: String::new(),
        plot: Plot::Lines { x: Axis::linear(x_desc), y: Axis::linear(y_desc), lines },
    };
    draw::png(&fig, path)
}
