//! Known keys, unknown-key detection and "did you mean" suggestions.

use crate::{ConfigError, RawConfig};
use std::sync::OnceLock;

/// Every valid dotted key, from the default configuration. A hot-data identifier
/// section (a table whose `kind` names an identifier, e.g. `placement.identifier`)
/// accepts the parameters of every identifier kind, not only the default kind's.
pub fn known_keys() -> Vec<String> {
    known().to_vec()
}

/// [`known_keys`], built once per process: the list depends only on the
/// defaults, and a load checks the file and every `--set` against it.
pub(crate) fn known() -> &'static [String] {
    static KNOWN: OnceLock<Vec<String>> = OnceLock::new();
    KNOWN.get_or_init(build_known_keys)
}

fn build_known_keys() -> Vec<String> {
    let v = toml::Value::try_from(RawConfig::default()).expect("default config serialises");
    let mut out = Vec::new();
    flatten(&v, "", &mut out);
    let sections: Vec<String> = out
        .iter()
        .filter_map(|k| k.strip_suffix(".kind"))
        .filter(|section| {
            let kind = lookup(&v, &format!("{section}.kind")).and_then(|k| k.as_str().map(str::to_string));
            kind.is_some_and(|k| flashlab_hotdata::IdentifierSpec::from_name(&k).is_ok())
        })
        .map(str::to_string)
        .collect();
    let params = identifier_params();
    for section in sections {
        for p in &params {
            let key = format!("{section}.{p}");
            if !out.contains(&key) {
                out.push(key);
            }
        }
    }
    out
}

/// The parameter names of every hot-data identifier kind (`kind` included).
fn identifier_params() -> Vec<String> {
    let mut names = Vec::new();
    for kind in flashlab_hotdata::IdentifierKind::ALL {
        let v = toml::Value::try_from(flashlab_hotdata::IdentifierSpec::default_for(kind)).expect("spec serialises");
        flatten(&v, "", &mut names);
    }
    names.sort();
    names.dedup();
    names
}

/// The value at dotted `key` of a TOML tree.
pub fn lookup<'a>(v: &'a toml::Value, key: &str) -> Option<&'a toml::Value> {
    key.split('.').try_fold(v, |node, part| node.as_table()?.get(part))
}

/// Whether `key` names a section (a table of keys) rather than a single key.
pub fn is_section(key: &str, known: &[String]) -> bool {
    let prefix = format!("{key}.");
    known.iter().any(|k| k.starts_with(&prefix))
}

/// Dotted paths of every leaf of a TOML tree.
pub fn flatten(v: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match v.as_table() {
        Some(t) => t.iter().for_each(|(k, v)| {
            let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            flatten(v, &p, out)
        }),
        None => out.push(prefix.to_string()),
    }
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Up to three valid keys nearest to `key` (by edit distance of the full path and of the last segment).
pub fn nearest(key: &str, known: &[String]) -> Vec<String> {
    let last = key.rsplit('.').next().unwrap_or(key);
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .map(|k| {
            let klast = k.rsplit('.').next().unwrap_or(k);
            (levenshtein(key, k).min(levenshtein(last, klast) + 3), k)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

/// 1-based line where dotted `key` is set in `text`, if it can be found.
pub fn line_of(text: &str, key: &str) -> Option<usize> {
    let (section, last) = key.rsplit_once('.').unwrap_or(("", key));
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = h.trim().to_string();
        } else if let Some((k, _)) = l.split_once('=') {
            let k = k.trim().trim_matches('"');
            let full = if current.is_empty() { k.to_string() } else { format!("{current}.{k}") };
            if full == key || (current == section && k == last) {
                return Some(i + 1);
            }
        }
    }
    None
}

/// The dotted key set on 1-based `line` of `text` (or the section its header opens).
pub fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut section = String::new();
    for (i, l) in text.lines().enumerate().take(line) {
        let l = l.trim();
        let header = l.strip_prefix("[[").and_then(|h| h.strip_suffix("]]"));
        if let Some(h) = header.or_else(|| l.strip_prefix('[').and_then(|h| h.strip_suffix(']'))) {
            section = h.trim().to_string();
            if i + 1 == line {
                return Some(section);
            }
        } else if i + 1 == line {
            let (k, _) = l.split_once('=')?;
            let k = k.trim().trim_matches('"');
            return Some(if section.is_empty() { k.to_string() } else { format!("{section}.{k}") });
        }
    }
    None
}

/// Reject any key of `tree` that is not a valid configuration key.
pub fn check_known(tree: &toml::Value, text: &str, source: &str) -> Result<(), ConfigError> {
    let known = known();
    let mut given = Vec::new();
    flatten(tree, "", &mut given);
    for key in given {
        if known.contains(&key) || is_section(&key, known) {
            continue;
        }
        let location = match line_of(text, &key) {
            Some(n) => format!("{source}:{n}"),
            None => source.to_string(),
        };
        let nearest = nearest(&key, known).join(", ");
        return Err(ConfigError::UnknownKey { location, key: key.escape_debug().to_string(), nearest });
    }
    Ok(())
}
