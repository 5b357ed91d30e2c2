//! Named NAND timing parameter sets. A preset fills the `timing.*` time keys that the
//! configuration does not set itself, so `preset = "mlc"` plus `read_us = 40` means
//! "MLC, but with tR = 40 µs".

use crate::ConfigError;

/// One preset: (name, read_us, program_us, erase_ms, byte_ns, what it represents).
pub const PRESETS: &[(&str, f64, f64, f64, f64, &str)] = &[
    ("ssdsim", 20.0, 200.0, 1.5, 25.0, "SSDsim's shipped parameters (the defaults)"),
    (
        "nandsim-seed000",
        25.0,
        200.0,
        2.0,
        0.0,
        "seed 000's nandsim device: read 25 us, program 200 us, erase 2 ms (nandsim's units; the paper prints ns), no bus time",
    ),
    ("slc", 25.0, 200.0, 1.5, 10.0, "representative SLC part: tR 25 us, tPROG 200 us, tBERS 1.5 ms, 100 MT/s bus"),
    ("mlc", 50.0, 900.0, 3.5, 5.0, "representative MLC part: tR 50 us, tPROG 900 us, tBERS 3.5 ms, 200 MT/s bus"),
    ("tlc", 75.0, 2000.0, 5.0, 2.5, "representative TLC part: tR 75 us, tPROG 2 ms, tBERS 5 ms, 400 MT/s bus"),
];

const KEYS: [&str; 4] = ["read_us", "program_us", "erase_ms", "byte_ns"];

/// Fill the time keys of `timing` that are absent from the preset named there.
pub fn expand(tree: &mut toml::Value) -> Result<(), ConfigError> {
    let Some(timing) = tree.get_mut("timing").and_then(|t| t.as_table_mut()) else { return Ok(()) };
    let name = match timing.get("preset") {
        Some(toml::Value::String(s)) => s.clone(),
        _ => return Ok(()),
    };
    if name == "custom" {
        return Ok(());
    }
    let Some(p) = PRESETS.iter().find(|p| p.0 == name) else {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        return Err(ConfigError::invalid(
            "timing.preset",
            format!("{name:?}"),
            format!("expected one of: custom, {}", names.join(", ")),
        ));
    };
    for (key, value) in KEYS.iter().zip([p.1, p.2, p.3, p.4]) {
        timing.entry(key.to_string()).or_insert(toml::Value::Float(value));
    }
    Ok(())
}

/// A GC preset: its name, the (section, key, value) triples it sets, what it combines.
pub type GcPreset = (&'static str, &'static [(&'static str, &'static str, &'static str)], &'static str);

/// GC presets (seed 001's three schemes, Basic-GC with two triggers).
pub const GC_PRESETS: &[GcPreset] = &[
    (
        "basic-gc",
        &[("gc", "victim", "greedy"), ("gc", "trigger", "threshold"), ("gc", "mode", "blocking"), ("placement", "enabled", "true"), ("ftl", "host_streams", "1"), ("ftl", "gc_streams", "2")],
        "seed 001's Basic-GC: greedy victims, WECO-style hot/cold separation of migrated pages (two GC streams), non-interruptible GC",
    ),
    (
        "ssdsim-basic",
        &[("gc", "victim", "greedy"), ("gc", "trigger", "free-ratio"), ("gc", "free_ratio_min", "0.1"), ("gc", "mode", "blocking"), ("placement", "enabled", "true"), ("ftl", "host_streams", "1"), ("ftl", "gc_streams", "2")],
        "seed 001's Basic-GC triggered as SSDsim does: one blocking greedy GC run per host page written while a plane's free pages are below 10 % (SSDsim's shipped gc hard threshold), WECO-style separation of migrated pages",
    ),
    (
        "dt-gc",
        &[("gc", "victim", "greedy"), ("gc", "trigger", "dt-gc"), ("gc", "mode", "preemptible"), ("placement", "enabled", "false")],
        "DT-GC (Qin et al. 2014): two-level dynamic thresholds, urgent GC blocking, interruptible GC in idle time, greedy victims",
    ),
    (
        "wpo-gc",
        &[("gc", "victim", "wpo"), ("gc", "trigger", "dt-gc"), ("gc", "mode", "preemptible"), ("placement", "enabled", "true"), ("ftl", "host_streams", "2"), ("ftl", "gc_streams", "2")],
        "WPO-GC (seed 001): DT-GC's triggers and interruptible GC, the WPO victim score, LPN-temperature placement of host writes and migrations",
    ),
];

/// Fill the keys of the GC preset named in `gc.preset` that the configuration does not set.
pub fn expand_gc(tree: &mut toml::Value) -> Result<(), ConfigError> {
    let name = match tree.get("gc").and_then(|g| g.get("preset")) {
        Some(toml::Value::String(s)) => s.clone(),
        _ => return Ok(()),
    };
    if name == "none" {
        return Ok(());
    }
    let Some((_, keys, _)) = GC_PRESETS.iter().find(|p| p.0 == name) else {
        let names: Vec<&str> = GC_PRESETS.iter().map(|p| p.0).collect();
        return Err(ConfigError::invalid(
            "gc.preset",
            format!("{name:?}"),
            format!("expected one of: none, {}", names.join(", ")),
        ));
    };
    let root = tree.as_table_mut().expect("config tree is a table");
    for (section, key, value) in keys.iter() {
        let table = root.entry(section.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
        let Some(table) = table.as_table_mut() else { continue };
        let v = toml::from_str::<toml::Table>(&format!("v = {value}")).ok().and_then(|mut t| t.remove("v"));
        table.entry(key.to_string()).or_insert_with(|| v.unwrap_or_else(|| toml::Value::String(value.to_string())));
    }
    Ok(())
}
