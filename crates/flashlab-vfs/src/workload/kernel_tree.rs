//! A deterministic synthetic kernel-like source tree (seed 002's "tar
//! archive of the Linux kernel (v3.7-rc6)", unpacked ten times).
//!
//! The shape ([`LINUX_3_7`]) is stated, not measured here: ≈ 41 000 files
//! in ≈ 2 800 directories, ≈ 500 MB of file bytes, a log-normal file size
//! (median 8 KiB, σ = 0.95, so the mean is ≈ 12.6 KiB) capped at 2 MiB —
//! the figures are those of a Linux 3.7 tree as commonly quoted (≈ 40 k
//! files, ≈ 15.9 M lines, ≈ 500 MB unpacked); docs/reproductions/fs-compare.md
//! gives the sources and what differs. Directories: 20 top-level ones under
//! the tree's root (arch, drivers, fs, ...), every further directory hangs
//! under a uniformly chosen earlier one below the root (a random recursive
//! tree: depth ≈ ln n). Files: every leaf directory gets one, the rest go
//! to directories with Pareto(α = 1.2) weights (a few directories hold
//! hundreds of files, as drivers/ and include/ do).
//!
//! Content is C-like text from a fixed vocabulary ([`VOCABULARY`], Zipf-
//! weighted) in lines with tab indentation; a file is a slice of one seeded
//! corpus, so generation costs a copy. zlib compresses it ≈ 3-4× and LZ4
//! ≈ 2×, like source code (see the unit tests).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::collections::HashSet;

/// The shape of a tree at scale 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TreeShape {
    pub files: u32,
    pub dirs: u32,
    pub top_level_dirs: u32,
    pub median_file_bytes: u64,
    /// σ of the file size's natural logarithm.
    pub size_sigma: f64,
    pub max_file_bytes: u64,
    /// Pareto shape of the directories' weights for file placement.
    pub dir_weight_alpha: f64,
}

/// A Linux 3.7 source tree (the figures the module docs state).
pub const LINUX_3_7: TreeShape = TreeShape {
    files: 41_000,
    dirs: 2_800,
    top_level_dirs: 20,
    median_file_bytes: 8 * 1024,
    size_sigma: 0.95,
    max_file_bytes: 2 << 20,
    dir_weight_alpha: 1.2,
};

/// The words of the generated text, most frequent first (Zipf weights 1/rank).
pub const VOCABULARY: &[&str] = &[
    "int",
    "struct",
    "return",
    "if",
    "the",
    "0",
    "=",
    "{",
    "}",
    "*",
    "static",
    "void",
    "dev",
    "u32",
    "const",
    "else",
    "for",
    "unsigned",
    "NULL",
    "char",
    "to",
    "case",
    "break",
    "data",
    "1",
    "sizeof",
    "goto",
    "err",
    "->",
    "of",
    "long",
    "is",
    "while",
    "ret",
    "size",
    "i",
    "a",
    "in",
    "priv",
    "reg",
    "u8",
    "bool",
    "this",
    "val",
    "len",
    "buf",
    "flags",
    "inline",
    "switch",
    "default",
    "define",
    "include",
    "&&",
    "||",
    "+",
    "-",
    "<",
    ">",
    "==",
    "!=",
    "spin_lock",
    "spin_unlock",
    "kfree",
    "kmalloc",
    "GFP_KERNEL",
    "EINVAL",
    "ENOMEM",
    "pr_err",
    "printk",
    "mutex_lock",
    "mutex_unlock",
    "list_head",
    "offset",
    "count",
    "index",
    "page",
    "inode",
    "file",
    "device",
    "driver",
    "irq",
    "u16",
    "u64",
    "status",
    "addr",
    "base",
    "mask",
    "value",
    "state",
    "info",
    "ops",
    "init",
    "exit",
    "module",
    "EXPORT_SYMBOL",
    "MODULE_LICENSE",
    "be",
    "not",
    "and",
    "with",
    "we",
    "this",
    "that",
    "for",
    "it",
    "from",
    "by",
    "on",
    "at",
    "as",
    "or",
    "an",
    "are",
    "will",
    "can",
    "should",
    "must",
    "register",
    "write",
    "read",
    "clock",
    "power",
    "queue",
    "buffer",
    "request",
    "result",
    "error",
    "timeout",
    "enable",
    "disable",
    "config",
    "port",
];

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeFile {
    /// Index into [`Tree::dirs`].
    pub dir: u32,
    pub name: String,
    pub bytes: u64,
    /// Start of the file's content in the corpus.
    pub corpus_offset: u64,
}

/// A generated tree: directories (parents before children, relative paths,
/// index 0 the tree's root "") and files.
#[derive(Debug, Clone)]
pub struct Tree {
    pub dirs: Vec<String>,
    pub files: Vec<TreeFile>,
    corpus: Vec<u8>,
}

const CORPUS_BYTES: usize = 4 << 20;

impl Tree {
    /// The tree of `shape` scaled by `scale` (files and directories; sizes
    /// keep their distribution), from `seed`.
    pub fn generate(shape: &TreeShape, scale: f64, seed: u64) -> Tree {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n_dirs = ((shape.dirs as f64 * scale).round() as u32).max(2);
        let n_files = ((shape.files as f64 * scale).round() as u32).max(1);
        let (dirs, parent) = make_dirs(shape, n_dirs, &mut rng);
        let corpus = corpus(&mut rng, CORPUS_BYTES);
        let placed = place_files(shape, &parent, n_files, &mut rng);
        let mut names: HashSet<(u32, String)> = HashSet::new();
        let files = placed
            .into_iter()
            .map(|dir| {
                let name = unique(&mut names, dir, &mut rng, file_name);
                let z = normal(&mut rng);
                let bytes = ((shape.median_file_bytes as f64) * (shape.size_sigma * z).exp()).round() as u64;
                let bytes = bytes.clamp(1, shape.max_file_bytes);
                let corpus_offset = rng.gen_range(0..CORPUS_BYTES as u64);
                TreeFile { dir, name, bytes, corpus_offset }
            })
            .collect();
        Tree { dirs, files, corpus }
    }

    /// The file's path relative to the tree's root.
    pub fn file_path(&self, i: usize) -> String {
        let f = &self.files[i];
        let d = &self.dirs[f.dir as usize];
        if d.is_empty() {
            f.name.clone()
        } else {
            format!("{d}/{}", f.name)
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    /// The content of file `i` (text; its `bytes` long).
    pub fn content(&self, i: usize) -> Vec<u8> {
        let f = &self.files[i];
        let mut out = Vec::with_capacity(f.bytes as usize);
        let mut at = f.corpus_offset as usize % self.corpus.len();
        while out.len() < f.bytes as usize {
            let take = (f.bytes as usize - out.len()).min(self.corpus.len() - at);
            out.extend_from_slice(&self.corpus[at..at + take]);
            at = 0;
        }
        out
    }
}

/// Directory paths and each one's parent (the root is its own parent).
fn make_dirs(shape: &TreeShape, n: u32, rng: &mut Xoshiro256PlusPlus) -> (Vec<String>, Vec<u32>) {
    let mut dirs = vec![String::new()];
    let mut parent = vec![0u32];
    let mut names: HashSet<(u32, String)> = HashSet::new();
    for i in 1..n {
        let p = if i <= shape.top_level_dirs { 0 } else { rng.gen_range(1..i) };
        let name = unique(&mut names, p, rng, |r| word(r).to_string());
        let path = if p == 0 { name } else { format!("{}/{name}", dirs[p as usize]) };
        dirs.push(path);
        parent.push(p);
    }
    (dirs, parent)
}

/// Each file's directory: one per leaf directory first, then by weight.
fn place_files(shape: &TreeShape, parent: &[u32], n: u32, rng: &mut Xoshiro256PlusPlus) -> Vec<u32> {
    let mut has_child = vec![false; parent.len()];
    for (i, p) in parent.iter().enumerate().skip(1) {
        has_child[*p as usize] = true;
        let _ = i;
    }
    let mut out: Vec<u32> = (0..parent.len() as u32).filter(|d| !has_child[*d as usize]).take(n as usize).collect();
    let mut cum = Vec::with_capacity(parent.len());
    let mut total = 0.0;
    for _ in 0..parent.len() {
        let u: f64 = rng.gen_range(f64::EPSILON..1.0);
        total += u.powf(-1.0 / shape.dir_weight_alpha);
        cum.push(total);
    }
    while out.len() < n as usize {
        let x = rng.gen::<f64>() * total;
        out.push(cum.partition_point(|c| *c <= x).min(parent.len() - 1) as u32);
    }
    out
}

/// A name not yet used in directory `dir` (a numeric suffix on a clash).
fn unique(
    used: &mut HashSet<(u32, String)>,
    dir: u32,
    rng: &mut Xoshiro256PlusPlus,
    make: impl Fn(&mut Xoshiro256PlusPlus) -> String,
) -> String {
    let base = make(rng);
    let mut name = base.clone();
    let mut n = 1;
    while !used.insert((dir, name.clone())) {
        n += 1;
        name = match base.rsplit_once('.') {
            Some((stem, ext)) => format!("{stem}{n}.{ext}"),
            None => format!("{base}{n}"),
        };
    }
    name
}

/// A vocabulary word usable in a path (letters, digits and `_` only).
fn word(rng: &mut Xoshiro256PlusPlus) -> &'static str {
    loop {
        let w = VOCABULARY[rng.gen_range(0..VOCABULARY.len())];
        if w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && w.len() > 1 {
            return w;
        }
    }
}

fn file_name(rng: &mut Xoshiro256PlusPlus) -> String {
    let ext = match rng.gen_range(0..100) {
        0..=49 => ".c",
        50..=84 => ".h",
        85..=89 => ".S",
        90..=94 => ".txt",
        _ => "",
    };
    if ext.is_empty() {
        return ["Makefile", "Kconfig", "README"][rng.gen_range(0..3)].to_string();
    }
    format!("{}_{}{ext}", word(rng), word(rng))
}

/// A standard normal deviate (Box-Muller).
fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `len` bytes of C-like text: lines of 1-10 Zipf-weighted words, indented by 0-3 tabs.
fn corpus(rng: &mut Xoshiro256PlusPlus, len: usize) -> Vec<u8> {
    let mut cum = Vec::with_capacity(VOCABULARY.len());
    let mut t = 0.0;
    for r in 1..=VOCABULARY.len() {
        t += 1.0 / r as f64;
        cum.push(t);
    }
    let mut out = Vec::with_capacity(len + 128);
    while out.len() < len {
        let tabs = [0, 1, 1, 1, 2, 2, 3][rng.gen_range(0..7)];
        out.extend(std::iter::repeat_n(b'\t', tabs));
        let words = rng.gen_range(1..=10);
        for k in 0..words {
            if k > 0 {
                out.push(b' ');
            }
            let x = rng.gen::<f64>() * t;
            let w = VOCABULARY[cum.partition_point(|c| *c <= x).min(VOCABULARY.len() - 1)];
            out.extend_from_slice(w.as_bytes());
        }
        out.extend_from_slice([";\n", "\n", " {\n", ";\n"][rng.gen_range(0..4)].as_bytes());
    }
    out.truncate(len);
    out
}

#[cfg(test)]
#[path = "kernel_tree_tests.rs"]
mod tests;
