//! The sweep table written out: CSV, Parquet (uncompressed, one row group, every
//! column optional) and a Markdown summary (mean and spread over seeds per point).

use crate::sweep::{Column, SweepSpec, Table};
use anyhow::Context;
use parquet::basic::{ConvertedType, Repetition, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

/// One CSV cell (empty for null; quoted when it holds a comma, quote or line break).
fn cell(c: &Column, i: usize) -> String {
    match c {
        Column::Int(v) => v[i].map_or(String::new(), |x| x.to_string()),
        Column::Float(v) => v[i].map_or(String::new(), |x| x.to_string()),
        Column::Bool(v) => v[i].map_or(String::new(), |x| x.to_string()),
        Column::Text(v) => v[i].as_deref().map_or(String::new(), quote),
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table as CSV with a header line.
pub fn csv(t: &Table) -> String {
    let mut out = t.names.iter().map(|n| quote(n)).collect::<Vec<_>>().join(",") + "\n";
    for i in 0..t.rows() {
        let cells: Vec<String> = t.columns.iter().map(|c| cell(c, i)).collect();
        out += &cells.join(",");
        out.push('\n');
    }
    out
}

fn field(name: &str, c: &Column) -> anyhow::Result<Arc<Type>> {
    let (physical, converted) = match c {
        Column::Int(_) => (Physical::INT64, ConvertedType::NONE),
        Column::Float(_) => (Physical::DOUBLE, ConvertedType::NONE),
        Column::Bool(_) => (Physical::BOOLEAN, ConvertedType::NONE),
        Column::Text(_) => (Physical::BYTE_ARRAY, ConvertedType::UTF8),
    };
    Ok(Arc::new(
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_converted_type(converted)
            .build()?,
    ))
}

/// Present values and definition levels (1 present, 0 null) of an optional column.
fn levels<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    (v.iter().flatten().cloned().collect(), v.iter().map(|x| x.is_some() as i16).collect())
}

/// Write the table as a Parquet file.
pub fn parquet(path: &Path, t: &Table) -> anyhow::Result<()> {
    let fields = t.names.iter().zip(&t.columns).map(|(n, c)| field(n, c)).collect::<anyhow::Result<Vec<_>>>()?;
    let schema = Arc::new(Type::group_type_builder("sweep").with_fields(fields).build()?);
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = SerializedFileWriter::new(file, schema, Arc::new(WriterProperties::builder().build()))?;
    let mut rg = w.next_row_group()?;
    let mut columns = t.columns.iter();
    while let Some(mut cw) = rg.next_column()? {
        let c = columns.next().expect("one column per field");
        match (cw.untyped(), c) {
            (ColumnWriter::Int64ColumnWriter(w), Column::Int(v)) => {
                let (x, d) = levels(v);
                w.write_batch(&x, Some(&d), None)?;
            }
            (ColumnWriter::DoubleColumnWriter(w), Column::Float(v)) => {
                let (x, d) = levels(v);
                w.write_batch(&x, Some(&d), None)?;
            }
            (ColumnWriter::BoolColumnWriter(w), Column::Bool(v)) => {
                let (x, d) = levels(v);
                w.write_batch(&x, Some(&d), None)?;
            }
            (ColumnWriter::ByteArrayColumnWriter(w), Column::Text(v)) => {
                let (x, d) = levels(v);
                let x: Vec<ByteArray> = x.into_iter().map(|s| ByteArray::from(s.into_bytes())).collect();
                w.write_batch(&x, Some(&d), None)?;
            }
            _ => unreachable!("writer type follows the schema built from the column"),
        }
        cw.close()?;
    }
    rg.close()?;
    w.close().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Result keys the summary shows (those present in the table).
const SUMMARY_KEYS: [&str; 7] = [
    "waf",
    "gc_copied_pages",
    "nand_erases",
    "write_latency_us_mean",
    "write_latency_us_p99",
    "read_latency_us_p99",
    "iops",
];

/// Cell `i` of a numeric column as f64 (`None` for null or a non-numeric column).
pub fn number(c: &Column, i: usize) -> Option<f64> {
    match c {
        Column::Int(v) => v[i].map(|x| x as f64),
        Column::Float(v) => v[i],
        _ => None,
    }
}

/// Mean ± sample standard deviation (and min–max) of the values; "-" when there are none.
pub fn mean_spread(v: &[f64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() == 1 {
        return format!("{mean:.4}");
    }
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    format!("{mean:.4} ± {sd:.4} ({lo:.4}–{hi:.4})")
}

/// One line per grid point: its values, the number of seeds, and mean ± sd (min–max)
/// over seeds of the main result keys.
pub fn summary_markdown(spec: &SweepSpec, t: &Table) -> String {
    let keys: Vec<&str> = SUMMARY_KEYS
        .iter()
        .copied()
        .filter(|k| t.get(k).is_some_and(|c| (0..t.rows()).any(|i| number(c, i).is_some())))
        .collect();
    let grid: Vec<&str> = spec.grid.iter().map(|(k, _)| k.as_str()).collect();
    let mut out = format!(
        "# Sweep summary\n\n{} points × {} seeds ({:?}); cells: mean ± sample std-dev (min–max) over seeds.\n\n",
        spec.points(),
        spec.seeds.len(),
        spec.seeds
    );
    let header: Vec<&str> = grid.iter().copied().chain(["seeds"]).chain(keys.iter().copied()).collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    let n = spec.seeds.len();
    for p in 0..spec.points() {
        let rows = p * n..(p + 1) * n;
        let mut cells: Vec<String> = grid.iter().map(|k| t.get(k).map_or(String::new(), |c| cell(c, p * n))).collect();
        cells.push(n.to_string());
        for k in &keys {
            let c = t.get(k).expect("filtered");
            let v: Vec<f64> = rows.clone().filter_map(|i| number(c, i)).collect();
            cells.push(mean_spread(&v));
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}
