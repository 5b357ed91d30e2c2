//! Hostile input, table-driven: every configuration key (every identifier kind's
//! parameters included) gets a wrong-type, an out-of-range and an absurdly large value
//! through `--set`, and the same values in a config file. The command must never
//! panic; a wrong type must be refused; any refusal must be one line that names the key.

use super::{flashlab, tmp};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Case {
    WrongType,
    OutOfRange,
    Absurd,
}

/// The hostile values for a key whose default is `default`.
fn values(default: &toml::Value) -> Vec<(Case, String)> {
    use toml::Value::*;
    match default {
        Integer(_) => vec![
            (Case::WrongType, "\"many\"".into()),
            (Case::OutOfRange, "-1".into()),
            (Case::Absurd, i64::MAX.to_string()),
        ],
        Float(_) => vec![
            (Case::WrongType, "\"half\"".into()),
            (Case::OutOfRange, "-1.5".into()),
            (Case::Absurd, "1e300".into()),
        ],
        Boolean(_) => vec![(Case::WrongType, "\"yes\"".into()), (Case::OutOfRange, "2".into())],
        String(_) => vec![
            (Case::WrongType, "42".into()),
            (Case::OutOfRange, "\"no-such-choice\"".into()),
            (Case::Absurd, format!("\"{}\"", "x".repeat(5000))),
        ],
        Array(_) => vec![(Case::WrongType, "7".into()), (Case::OutOfRange, "[1, 2]".into())],
        _ => vec![],
    }
}

/// Keys whose value is free text or an unconstrained count, where the out-of-range
/// string or the absurd number is a valid setting (checked only for "no panic").
fn free(key: &str) -> bool {
    key.ends_with("trace_path") || key.ends_with("seed") || key.ends_with("_seed")
}

fn default_of(tree: &toml::Value, key: &str) -> Option<toml::Value> {
    let v = key.split('.').try_fold(tree, |node, part| node.as_table()?.get(part))?;
    Some(v.clone())
}

/// An identifier parameter absent from the default (another kind's): a u64.
fn default_for(tree: &toml::Value, key: &str) -> toml::Value {
    default_of(tree, key).unwrap_or(toml::Value::Integer(1))
}

fn names_key(e: &str, key: &str) -> bool {
    let (section, last) = key.rsplit_once('.').unwrap_or(("", key));
    e.contains(key) || (e.contains(section) && e.contains(last))
}

#[test]
fn every_key_survives_hostile_values_with_a_one_line_error() {
    let default: toml::Value = toml::from_str(&flashlab_config::default_toml()).unwrap();
    let keys = flashlab_config::keys::known_keys();
    assert!(keys.len() > 140, "{} keys", keys.len());
    let mut bad: Vec<String> = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            bad.push(what);
        }
    };
    let (_d, empty) = tmp("empty.toml", "");
    let empty = empty.to_str().unwrap();
    let mut refused = 0;
    let mut cases = 0;
    for key in &keys {
        for (case, value) in values(&default_for(&default, key)) {
            cases += 1;
            let set = format!("{key}={value}");
            let o = flashlab(&["config", "check", empty, "--set", &set]);
            let code = o.status.code();
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            check(code == Some(0) || code == Some(1), format!("--set {set}: status {code:?} (panic?): {err}"));
            if case == Case::WrongType {
                check(code == Some(1), format!("--set {set} was accepted"));
            }
            if code == Some(1) {
                refused += 1;
                check(err.lines().count() == 1, format!("--set {set}: {err}"));
                check(err.starts_with("flashlab: error: "), format!("--set {set}: {err}"));
                check(err.len() < 6000, format!("--set {set}: {} bytes", err.len()));
                let shown = err.replace(&"x".repeat(5000), "x…");
                check(names_key(&err, key), format!("--set {set}: error does not name the key: {shown}"));
            } else {
                check(case != Case::WrongType || free(key), format!("--set {set} accepted"));
            }
            // The same value in a file: no panic, and a refusal is one line naming the key.
            if case != Case::Absurd {
                let (section, last) = key.rsplit_once('.').unwrap();
                let (_f, file) = tmp("h.toml", &format!("[{section}]\n{last} = {value}\n"));
                let o = flashlab(&["config", "check", file.to_str().unwrap()]);
                let err = String::from_utf8_lossy(&o.stderr).to_string();
                check(matches!(o.status.code(), Some(0 | 1)), format!("{key} = {value} in a file: {err}"));
                if !o.status.success() {
                    check(err.lines().count() == 1, format!("{key} = {value} in a file: {err}"));
                    // An identifier section without its `kind` is refused as a whole.
                    let kindless = err.contains(&format!("h.toml:1: {section}: missing field `kind`"));
                    check(names_key(&err, key) || kindless, format!("{key} = {value} in a file: {err}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
    assert!(cases > 400 && refused > 300, "{refused} of {cases} refused");
}
