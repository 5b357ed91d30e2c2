//! Drawing a [`Figure`] with plotters, one code path for both outputs: an SVG
//! string for inline use in a page, or a PNG file (with the bundled font).
//! The legend has its own strip right of the plot, so it never hides data.

use super::figure::{colour, short_number, viridis, Axis, Figure, Line, Plot};
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Canvas size in pixels, and the legend strip's width.
pub const SIZE: (u32, u32) = (960, 480);
const LEGEND_W: u32 = 210;

type Area<DB> = DrawingArea<DB, Shift>;
type Chart<'a, DB, X, Y> =
    ChartContext<'a, DB, Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>>;

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plot: {e:?}")
}

/// The figure as an SVG document (deterministic: same figure, same bytes).
pub fn svg(fig: &Figure) -> anyhow::Result<String> {
    crate::plot::fonts(); // text extents are measured with the bundled font
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, fig)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The figure as a PNG file.
pub fn png(fig: &Figure, path: &Path) -> anyhow::Result<()> {
    crate::plot::fonts();
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(&root, fig)?;
    root.present().map_err(|e| anyhow::anyhow!("cannot write {}: {e:?}", path.display()))
}

fn draw<DB: DrawingBackend>(root: &Area<DB>, fig: &Figure) -> anyhow::Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_W);
    match &fig.plot {
        Plot::Lines { x, y, lines } => {
            draw_lines(&plot, &fig.title, x, y, lines)?;
            let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
            legend_entries(&legend, &names, false)
        }
        Plot::Bars { x_label, y, categories, series } if series.len() == 1 => {
            draw_bars(root, &fig.title, x_label, y, categories, series)
        }
        Plot::Bars { x_label, y, categories, series } => {
            draw_bars(&plot, &fig.title, x_label, y, categories, series)?;
            let names: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
            legend_entries(&legend, &names, true)
        }
        Plot::Heat { x_label, y_label, columns, rows, cells, unit } => {
            let (lo, hi) = cells.iter().flatten().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            draw_heat(&plot, &fig.title, x_label, y_label, columns, rows, cells, (lo, hi))?;
            colour_bar(&legend, unit, (lo, hi))
        }
    }
}

fn text_style(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(h, v))
}

fn legend_entries<DB: DrawingBackend>(legend: &Area<DB>, names: &[&str], boxes: bool) -> anyhow::Result<()> {
    for (i, name) in names.iter().enumerate() {
        let y = 60 + 24 * i as i32;
        let c = colour(i);
        if boxes {
            legend.draw(&Rectangle::new([(8, y - 7), (30, y + 7)], c.filled())).map_err(err)?;
        } else {
            legend.draw(&PathElement::new(vec![(6, y), (32, y)], c.stroke_width(3))).map_err(err)?;
        }
        let label: String = name.chars().take(24).collect();
        legend.draw(&Text::new(label, (38, y), text_style(14, HPos::Left, VPos::Center))).map_err(err)?;
    }
    Ok(())
}

/// Axis range covering `values`: from 0 (or the least value if negative) on a linear
/// axis, around the positive values with a margin on a log axis.
fn range(values: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
    let lo = v.iter().copied().fold(f64::MAX, f64::min);
    let hi = v.iter().copied().fold(f64::MIN, f64::max);
    if v.is_empty() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        return (lo / 1.5, hi * 1.5);
    }
    let lo = if from_zero { lo.min(0.0) } else { lo };
    let span = (hi - lo).max(hi.abs() * 1e-6).max(1e-12);
    (lo, hi + span * 0.08)
}

fn draw_lines<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    x: &Axis,
    y: &Axis,
    lines: &[Line],
) -> anyhow::Result<()> {
    let (x0, x1) = range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)), x.log, false);
    let (y0, y1) = range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)), y.log, true);
    match (x.log, y.log) {
        (false, false) => lines_in(area, title, x0..x1, y0..y1, (x, y), lines),
        (true, false) => lines_in(area, title, (x0..x1).log_scale(), y0..y1, (x, y), lines),
        (false, true) => lines_in(area, title, x0..x1, (y0..y1).log_scale(), (x, y), lines),
        (true, true) => lines_in(area, title, (x0..x1).log_scale(), (y0..y1).log_scale(), (x, y), lines),
    }
}

/// A chart with the common frame: caption, margins, label areas.
fn chart_on<'a, DB, X, Y>(area: &'a Area<DB>, title: &str, x: X, y: Y) -> anyhow::Result<Chart<'a, DB, X, Y>>
where
    DB: DrawingBackend,
    X: AsRangedCoord,
    Y: AsRangedCoord,
{
    ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(err)
}

/// The common axis style: descriptions, label fonts, faint grid.
fn style_mesh<X, Y, DB>(m: &mut MeshStyle<'_, '_, X, Y, DB>, xd: &str, yd: &str)
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    m.x_desc(xd)
        .y_desc(yd)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(RGBColor(238, 238, 238));
}

fn lines_in<DB, X, Y>(
    area: &Area<DB>,
    title: &str,
    x: X,
    y: Y,
    axes: (&Axis, &Axis),
    lines: &[Line],
) -> anyhow::Result<()>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = chart_on(area, title, x, y)?;
    let fmt = |v: &f64| short_number(*v);
    let log = (axes.0.log, axes.1.log);
    let mut mesh = chart.configure_mesh();
    style_mesh(&mut mesh, &axes.0.label, &axes.1.label);
    mesh.x_labels(8).y_labels(8).x_label_formatter(&fmt).y_label_formatter(&fmt).draw().map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let c = colour(i);
        let runs = drawable_runs(&l.points, log);
        for run in &runs {
            chart.draw_series(LineSeries::new(run.iter().copied(), c.stroke_width(2))).map_err(err)?;
        }
        if l.points.len() <= 60 {
            let pts = runs.into_iter().flatten();
            chart.draw_series(pts.map(|p| Circle::new(p, 3, c.filled()))).map_err(err)?;
        }
    }
    Ok(())
}

/// The points split into runs that can be drawn: finite, and positive on a log axis
/// (`log` = (x, y)). A value a log axis cannot show (zero) leaves a gap.
fn drawable_runs(points: &[(f64, f64)], log: (bool, bool)) -> Vec<Vec<(f64, f64)>> {
    let ok = |v: f64, l: bool| v.is_finite() && (!l || v > 0.0);
    let mut runs = vec![Vec::new()];
    for &(x, y) in points {
        if ok(x, log.0) && ok(y, log.1) {
            runs.last_mut().expect("one run").push((x, y));
        } else if !runs.last().expect("one run").is_empty() {
            runs.push(Vec::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// The name of the category whose centre is at `v` (ticks fall on half units), or "".
fn category_at(names: &[String], v: f64, every: usize) -> String {
    let half = (v * 2.0).round() as i64;
    if half % 2 != 1 || !((half / 2) as usize).is_multiple_of(every) {
        return String::new();
    }
    names.get((half / 2) as usize).cloned().unwrap_or_default()
}

fn draw_bars<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    x_label: &str,
    y: &Axis,
    cats: &[String],
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<()> {
    let (mut y0, mut y1) = range(series.iter().flat_map(|s| s.1.iter().copied()), y.log, true);
    if y.log {
        y1 *= 2.0; // room for the value labels
    } else {
        y1 += (y1 - y0) * 0.07;
        y0 = y0.min(0.0);
    }
    match y.log {
        false => bars_in(area, title, x_label, &y.label, y0..y1, (y0, y1, false), cats, series),
        true => bars_in(area, title, x_label, &y.label, (y0..y1).log_scale(), (y0, y1, true), cats, series),
    }
}

#[allow(clippy::too_many_arguments)]
fn bars_in<DB, Y>(
    area: &Area<DB>,
    title: &str,
    x_label: &str,
    y_label: &str,
    y: Y,
    (y0, y1, log): (f64, f64, bool),
    cats: &[String],
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<()>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let n = cats.len().max(1);
    let mut chart = chart_on(area, title, 0.0..n as f64, y)?;
    let every = n.div_ceil(24);
    let xfmt = |v: &f64| category_at(cats, *v, every);
    let yfmt = |v: &f64| short_number(*v);
    let mut mesh = chart.configure_mesh();
    style_mesh(&mut mesh, x_label, y_label);
    mesh.disable_x_mesh().x_labels(2 * n + 1).x_label_formatter(&xfmt).y_label_formatter(&yfmt).draw().map_err(err)?;
    let bars = series.len().max(1);
    let width = 0.8 / bars as f64;
    // Height of a value as a share of the axis, to find bars too small to see.
    let share = |v: f64| if log { (v.max(y0) / y0).ln() / (y1 / y0).ln() } else { (v - y0) / (y1 - y0) };
    let label_all = n * bars <= 16;
    // Bars narrower than a label get theirs turned upright.
    let bar_px = (SIZE.0 - LEGEND_W - 110) as f64 / n as f64 * width;
    for (si, (_, values)) in series.iter().enumerate() {
        let c = colour(si);
        for (ci, &v) in values.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            let x0 = ci as f64 + 0.1 + si as f64 * width;
            let base = if log { y0 } else { 0.0 };
            if !log || v > 0.0 {
                chart.draw_series([Rectangle::new([(x0, base), (x0 + width * 0.92, v)], c.filled())]).map_err(err)?;
            }
            if label_all || share(v) < 0.04 {
                let at = (x0 + width * 0.46, if log { v.max(y0) } else { v.max(0.0) });
                let style = if bar_px < 34.0 {
                    let font = ("sans-serif", 12).into_font().transform(FontTransform::Rotate270);
                    TextStyle::from(font).pos(Pos::new(HPos::Left, VPos::Center))
                } else {
                    text_style(12, HPos::Center, VPos::Bottom)
                };
                chart.draw_series([Text::new(short_number(v), at, style)]).map_err(err)?;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn draw_heat<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    x_label: &str,
    y_label: &str,
    columns: &[String],
    rows: &[String],
    cells: &[Vec<f64>],
    (lo, hi): (f64, f64),
) -> anyhow::Result<()> {
    let (nc, nr) = (columns.len().max(1), rows.len().max(1));
    let mut chart = chart_on(area, title, 0.0..nc as f64, 0.0..nr as f64)?;
    // Row 0 at the top: row r spans y (nr - 1 - r) .. (nr - r).
    let rev: Vec<String> = rows.iter().rev().cloned().collect();
    let xfmt = |v: &f64| category_at(columns, *v, nc.div_ceil(32));
    let yfmt = |v: &f64| category_at(&rev, *v, nr.div_ceil(24));
    let mut mesh = chart.configure_mesh();
    style_mesh(&mut mesh, x_label, y_label);
    mesh.disable_mesh()
        .x_labels(2 * nc + 1)
        .y_labels(2 * nr + 1)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .draw()
        .map_err(err)?;
    let span = (hi - lo).max(1e-12);
    let cell_px = (SIZE.0 - LEGEND_W - 110) as f64 / nc as f64;
    for (r, row) in cells.iter().enumerate() {
        let yb = (nr - 1 - r) as f64;
        for (c, &v) in row.iter().enumerate() {
            let t = if hi > lo { (v - lo) / span } else { 0.5 };
            let cell = Rectangle::new([(c as f64, yb), (c as f64 + 1.0, yb + 1.0)], viridis(t).filled());
            chart.draw_series([cell]).map_err(err)?;
            if cell_px >= 30.0 && nr <= 40 {
                let ink = if t < 0.6 { WHITE } else { BLACK };
                let style = text_style(12, HPos::Center, VPos::Center).color(&ink);
                chart.draw_series([Text::new(short_number(v), (c as f64 + 0.5, yb + 0.5), style)]).map_err(err)?;
            }
        }
    }
    Ok(())
}

/// A vertical colour bar with the extreme values and the unit.
fn colour_bar<DB: DrawingBackend>(legend: &Area<DB>, unit: &str, (lo, hi): (f64, f64)) -> anyhow::Result<()> {
    let (top, height, steps) = (60, 300, 60);
    for i in 0..steps {
        let t = 1.0 - i as f64 / (steps - 1) as f64;
        let y = top + i * height / steps;
        legend.draw(&Rectangle::new([(10, y), (36, y + height / steps + 1)], viridis(t).filled())).map_err(err)?;
    }
    let label = |v: f64, y: i32| Text::new(short_number(v), (44, y), text_style(13, HPos::Left, VPos::Center));
    legend.draw(&label(hi, top)).map_err(err)?;
    legend.draw(&label(lo, top + height)).map_err(err)?;
    let u = Text::new(unit.to_string(), (10, top - 22), text_style(14, HPos::Left, VPos::Center));
    legend.draw(&u).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figure::Axis;

    /// Whether the SVG has a text element reading `t`.
    fn text(svg: &str, t: &str) -> bool {
        svg.contains(&format!(">\n{t}\n</text>"))
    }

    fn bars(values: Vec<f64>, series: usize) -> Figure {
        let categories = (0..values.len()).map(|i| format!("c{i}")).collect();
        Figure {
            id: "b".into(),
            title: "bars".into(),
            caption: String::new(),
            plot: Plot::Bars {
                x_label: "category".into(),
                y: Axis::auto("count", values.iter().copied(), 2.0),
                categories,
                series: (0..series).map(|s| (format!("s{s}"), values.clone())).collect(),
            },
        }
    }

    #[test]
    fn svg_is_deterministic_and_draws_each_kind() {
        let lines = Figure {
            id: "l".into(),
            title: "lines".into(),
            caption: String::new(),
            plot: Plot::Lines {
                x: Axis::log("x (µs)"),
                y: Axis::linear("y"),
                lines: vec![Line { name: "a<b".into(), points: vec![(1.0, 0.5), (10.0, 1.0)] }],
            },
        };
        let heat = Figure {
            id: "h".into(),
            title: "heat".into(),
            caption: String::new(),
            plot: Plot::Heat {
                x_label: "x".into(),
                y_label: "y".into(),
                columns: vec!["a".into(), "b".into()],
                rows: vec!["r".into()],
                cells: vec![vec![1.0, 3.0]],
                unit: "u".into(),
            },
        };
        for f in [lines, heat, bars(vec![1.0, 2.0, 1000.0], 2)] {
            let a = svg(&f).unwrap();
            assert_eq!(a, svg(&f).unwrap(), "{}", f.id);
            assert!(a.starts_with("<svg") && a.contains(&f.title), "{}", f.id);
        }
        // Escaped series name, log axis labels, heat-map cell values and colour-bar ends.
        let l = svg(&Figure { id: "x".into(), ..bars(vec![1.0], 1) }).unwrap();
        assert!(text(&l, "1"), "the lone bar is labelled");
    }

    #[test]
    fn zeros_on_a_log_axis_leave_gaps() {
        let pts = [(0.0, 1.0), (1.0, 2.0), (2.0, 0.0), (3.0, 4.0), (4.0, f64::NAN)];
        assert_eq!(drawable_runs(&pts, (false, true)), vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 4.0)]]);
        assert_eq!(drawable_runs(&pts, (true, false)).concat(), pts[1..4].to_vec());
    }

    #[test]
    fn small_bars_get_value_labels() {
        // 20 bars: only the ones under 4 % of the axis are labelled.
        let mut v = vec![100.0; 20];
        v[3] = 2.0;
        v[7] = 0.0;
        let s = svg(&bars(v, 1)).unwrap();
        assert!(text(&s, "2") && text(&s, "0"));
        assert!(!text(&s, "100") || s.matches(">\n100\n</text>").count() == 1, "at most the y axis tick");
    }
}
