//! Stage 2: parse the text, check its keys, apply `--set KEY=VALUE` overrides.

use crate::keys::{check_known, flatten, is_section, known, nearest};
use crate::{ConfigError, RawConfig};
use serde::Deserialize;

/// Parse `text` (named `source` in errors), apply `sets`, deserialise.
pub fn parse_with_overrides(text: &str, source: &str, sets: &[String]) -> Result<RawConfig, ConfigError> {
    let mut tree: toml::Value = toml::from_str(text).map_err(|e| syntax(source, text, &e))?;
    check_known(&tree, text, source)?;
    // Deserialise the file alone first: type errors then carry the file's line numbers.
    toml::from_str::<RawConfig>(text).map_err(|e| syntax(source, text, &e))?;
    for arg in sets {
        apply_set(&mut tree, arg)?;
    }
    crate::presets::expand(&mut tree)?;
    crate::presets::expand_gc(&mut tree)?;
    check_finite(&tree, "")?;

    RawConfig::deserialize(tree)
        .map_err(|e| ConfigError::SetValue { key: "(overrides)".into(), message: one_line(&e.to_string()) })
}

/// A TOML error as `FILE:LINE: KEY: message` (the key whose value is at fault, when
/// the error points at a `key = value` line or a `[section]` header).
fn syntax(source: &str, text: &str, e: &toml::de::Error) -> ConfigError {
    let message = one_line(e.message());
    let Some(span) = e.span() else {
        return ConfigError::Syntax { source_name: source.to_string(), message: one_line(&e.to_string()) };
    };
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    let location = match crate::keys::key_at_line(text, line) {
        Some(key) => format!("{source}:{line}: {key}"),
        None => format!("{source}:{line}"),
    };
    ConfigError::Syntax { source_name: location, message }
}

/// toml's messages span several lines (a caret diagram); keep the location and the message.
fn one_line(msg: &str) -> String {
    let mut lines = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.chars().all(|c| c == '^' || c == ' '));
    let first = lines.next().unwrap_or("").to_string();
    let rest: Vec<&str> = lines.filter(|l| !l.chars().next().is_some_and(|c| c.is_ascii_digit())).collect();
    if rest.is_empty() {
        first
    } else {
        format!("{first} {}", rest.join("; "))
    }
}

/// Apply one `KEY=VALUE`; VALUE is TOML (`0.1`, `true`, `"zipf"`) or a bare string (`zipf`).
pub fn apply_set(tree: &mut toml::Value, arg: &str) -> Result<(), ConfigError> {
    let (key, value) = arg.split_once('=').ok_or_else(|| ConfigError::SetSyntax { arg: arg.to_string() })?;
    let key = key.trim();
    let known = known();
    let value = parse_value(value.trim());
    // A whole section may be set with an inline table, e.g. `placement.identifier={ kind = "multi-hash" }`.
    let section = value.is_table() && is_section(key, known);
    if !section && !known.iter().any(|k| k == key) {
        let nearest = nearest(key, known).join(", ");
        return Err(ConfigError::UnknownKey { location: "--set".into(), key: key.escape_debug().to_string(), nearest });
    }
    if section {
        let mut inner = Vec::new();
        flatten(&value, key, &mut inner);
        if let Some(bad) = inner.iter().find(|k| !known.contains(k) && !is_section(k, known)) {
            let nearest = nearest(bad, known).join(", ");
            let key = bad.escape_debug().to_string();
            return Err(ConfigError::UnknownKey { location: "--set".into(), key, nearest });
        }
    }
    let mut node = tree;
    let parts: Vec<&str> = key.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        let table = node.as_table_mut().expect("config tree is a table");
        node = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
    }
    let table = node
        .as_table_mut()
        .ok_or_else(|| ConfigError::SetValue { key: key.into(), message: "parent is not a table".into() })?;
    table.insert(parts[parts.len() - 1].to_string(), value);
    // Type-check this key alone so the error names it.
    RawConfig::deserialize(toml::Value::Table(single(key, table.get(parts[parts.len() - 1]).cloned())))
        .map_err(|e| ConfigError::SetValue { key: key.into(), message: one_line(&e.to_string()) })?;
    Ok(())
}

fn single(key: &str, v: Option<toml::Value>) -> toml::Table {
    let mut parts = key.rsplit('.');
    let mut node = v.unwrap_or(toml::Value::Boolean(false));
    let last = parts.next().unwrap_or(key).to_string();
    let mut t = toml::Table::new();
    t.insert(last, node);
    for p in parts {
        node = toml::Value::Table(t);
        t = toml::Table::new();
        t.insert(p.to_string(), node);
    }
    t
}

fn parse_value(v: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {v}")) {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(v.to_string())),
        Err(_) => toml::Value::String(v.to_string()),
    }
}

/// `nan` and `inf` are TOML floats but no key's value: refuse them by key.
fn check_finite(v: &toml::Value, key: &str) -> Result<(), ConfigError> {
    match v {
        toml::Value::Float(f) if !f.is_finite() => {
            Err(ConfigError::Setting { key: key.to_string(), message: format!("{f} is not a finite number") })
        }
        toml::Value::Table(t) => t
            .iter()
            .try_for_each(|(k, v)| check_finite(v, &if key.is_empty() { k.clone() } else { format!("{key}.{k}") })),
        toml::Value::Array(a) => a.iter().enumerate().try_for_each(|(i, v)| check_finite(v, &format!("{key}[{i}]"))),
        _ => Ok(()),
    }
}
