//! The figure data model: what to draw, independent of the output (inline SVG in
//! a page, or PNG). A report, a reproduction or a sweep builds [`Figure`]s and hands
//! them to [`super::draw`].

use plotters::style::RGBColor;

/// The Okabe–Ito palette (Okabe & Ito, "Color Universal Design", 2008): told apart
/// under the common colour-vision deficiencies. Blue first; yellow late (low contrast on white).
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The colour of series `i`.
pub fn colour(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// An axis: its label (with the unit) and whether it is logarithmic.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub label: String,
    pub log: bool,
}

impl Axis {
    pub fn linear(label: impl Into<String>) -> Self {
        Axis { label: label.into(), log: false }
    }
    pub fn log(label: impl Into<String>) -> Self {
        Axis { label: label.into(), log: true }
    }
    /// Logarithmic when the positive values span more than `decades` decades.
    pub fn auto(label: impl Into<String>, values: impl Iterator<Item = f64>, decades: f64) -> Self {
        let (lo, hi) =
            values.filter(|v| v.is_finite() && *v > 0.0).fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        Axis { label: label.into(), log: hi > 0.0 && hi / lo > 10f64.powf(decades) }
    }
}

/// A named series of (x, y) points.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Plot {
    /// Lines, one colour each, legend beside the plot.
    Lines { x: Axis, y: Axis, lines: Vec<Line> },
    /// Bars: one group per category, one bar per series; small bars get value labels.
    Bars { x_label: String, y: Axis, categories: Vec<String>, series: Vec<(String, Vec<f64>)> },
    /// A grid of cells coloured by value (viridis), each labelled with its value.
    Heat {
        x_label: String,
        y_label: String,
        columns: Vec<String>,
        rows: Vec<String>,
        cells: Vec<Vec<f64>>,
        unit: String,
    },
}

/// A figure: an id (HTML anchor and PNG file name), a title and a caption.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub caption: String,
    pub plot: Plot,
}

impl Figure {
    /// Whether there is anything to draw.
    pub fn has_data(&self) -> bool {
        match &self.plot {
            Plot::Lines { lines, .. } => lines.iter().any(|l| !l.points.is_empty()),
            Plot::Bars { series, .. } => series.iter().any(|s| s.1.iter().any(|v| v.is_finite())),
            Plot::Heat { cells, .. } => cells.iter().any(|r| !r.is_empty()),
        }
    }
}

/// A number as a short axis or bar label: "0", "0.25", "20", "1.5e6".
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.2e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{e}", trim_zeros(m));
    }
    let digits = if a >= 100.0 {
        0
    } else if a >= 1.0 {
        2
    } else {
        4
    };
    trim_zeros(&format!("{v:.digits$}"))
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// Viridis (matplotlib's perceptually uniform, colour-blind-safe map) at t in 0..=1,
/// linearly between nine of its published stops.
pub fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 45, 123),
        (59, 82, 139),
        (44, 114, 142),
        (33, 145, 140),
        (40, 174, 128),
        (94, 201, 98),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 } * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        let cases = [
            (0.0, "0"),
            (0.25, "0.25"),
            (20.0, "20"),
            (1.5, "1.5"),
            (1234.0, "1234"),
            (1.5e6, "1.5e6"),
            (2e-4, "2e-4"),
        ];
        for (v, s) in cases {
            assert_eq!(short_number(v), s, "{v}");
        }
    }

    #[test]
    fn viridis_ends_and_middle() {
        assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(viridis(0.5), RGBColor(33, 145, 140));
        assert_eq!(viridis(f64::NAN), RGBColor(68, 1, 84));
    }

    #[test]
    fn axis_turns_log_past_the_decades() {
        assert!(Axis::auto("y", [1.0, 500.0].into_iter(), 2.0).log);
        assert!(!Axis::auto("y", [1.0, 50.0, 0.0].into_iter(), 2.0).log);
        assert!(!Axis::auto("y", std::iter::empty(), 2.0).log);
    }
}
