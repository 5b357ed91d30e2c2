//! `reproduce NAME`'s `index.html`: the Markdown results (the claims table and raw
//! values), every PNG the experiment drew (embedded as data URIs), and the
//! configurations used, in one self-contained page beside `results.md`.

use super::html::{markdown, Page};
use anyhow::Context;
use std::path::Path;

/// One configuration the experiment used: a heading and its text (TOML or a list of overrides).
pub struct ConfigUsed {
    pub name: String,
    pub text: String,
}

/// Write `out/index.html` from `out/results.md`, the PNGs in `out` (by file name) and `configs`.
pub fn write_index(out: &Path, name: &str, configs: &[ConfigUsed]) -> anyhow::Result<()> {
    let md_path = out.join("results.md");
    let md = std::fs::read_to_string(&md_path).with_context(|| format!("cannot read {}", md_path.display()))?;
    let mut page = Page::new(&format!("flashlab reproduce {name}"));
    page.raw(&markdown(&md));
    page.heading("Plots");
    let mut pngs: Vec<_> = std::fs::read_dir(out)
        .with_context(|| format!("cannot list {}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    pngs.sort_by_key(|p| natural_key(&p.file_name().unwrap_or_default().to_string_lossy()));
    for p in &pngs {
        let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        let file = p.file_name().unwrap_or_default().to_string_lossy();
        let id = file.trim_end_matches(".png").replace('_', "-");
        page.figure_png(&id, &file, &bytes);
    }
    page.heading("Configurations used");
    for c in configs {
        page.pre(&c.name, &c.text);
    }
    let path = out.join("index.html");
    std::fs::write(&path, page.finish()).with_context(|| format!("cannot write {}", path.display()))
}

/// Sort key that orders embedded numbers by value ("fig9" before "fig10").
fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((std::mem::take(&mut text), digits.parse().unwrap_or(u64::MAX)));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

#[cfg(test)]
mod tests {
    #[test]
    fn natural_order() {
        let mut v = vec!["fig10_a.png", "fig6_b.png", "fig9_c.png", "alpha.png"];
        v.sort_by_key(|n| super::natural_key(n));
        assert_eq!(v, ["alpha.png", "fig6_b.png", "fig9_c.png", "fig10_a.png"]);
    }
}
