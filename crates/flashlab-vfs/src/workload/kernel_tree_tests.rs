use super::*;
use std::io::Write;

fn zlib_ratio(data: &[u8]) -> f64 {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    data.len() as f64 / e.finish().unwrap().len() as f64
}

#[test]
fn same_seed_same_tree_other_seed_other_tree() {
    let a = Tree::generate(&LINUX_3_7, 0.05, 7);
    let b = Tree::generate(&LINUX_3_7, 0.05, 7);
    let c = Tree::generate(&LINUX_3_7, 0.05, 8);
    assert_eq!(a.dirs, b.dirs);
    assert_eq!(a.files, b.files);
    assert_eq!(a.content(3), b.content(3));
    assert_ne!(a.files, c.files);
}

#[test]
fn full_scale_shape_is_within_the_stated_bounds() {
    let t = Tree::generate(&LINUX_3_7, 1.0, 1);
    assert_eq!(t.files.len(), 41_000);
    assert_eq!(t.dirs.len(), 2_800);
    let total = t.total_bytes();
    assert!((450e6..560e6).contains(&(total as f64)), "total {total}");
    let mut sizes: Vec<u64> = t.files.iter().map(|f| f.bytes).collect();
    sizes.sort_unstable();
    let median = sizes[sizes.len() / 2];
    assert!((7 * 1024..10 * 1024).contains(&median), "median {median}");
    assert!(*sizes.last().unwrap() <= LINUX_3_7.max_file_bytes);
    // Heavy tail: the largest 1 % of files hold > 8 % of the bytes.
    let top: u64 = sizes[sizes.len() - sizes.len() / 100..].iter().sum();
    assert!(top as f64 > 0.08 * total as f64, "top 1 % hold {top} of {total}");
    // Every directory path is unique, every parent precedes its child.
    let set: HashSet<&String> = t.dirs.iter().collect();
    assert_eq!(set.len(), t.dirs.len());
    for d in t.dirs.iter().skip(1) {
        if let Some((p, _)) = d.rsplit_once('/') {
            assert!(set.contains(&p.to_string()), "{d} without its parent");
        }
    }
    let paths: HashSet<String> = (0..t.files.len()).map(|i| t.file_path(i)).collect();
    assert_eq!(paths.len(), t.files.len(), "file paths are unique");
    let depth = t.dirs.iter().map(|d| d.matches('/').count()).max().unwrap();
    assert!((4..=20).contains(&depth), "deepest directory at depth {depth}");
}

#[test]
fn content_has_the_stated_size_and_compresses_like_source() {
    let t = Tree::generate(&LINUX_3_7, 0.02, 3);
    for i in 0..t.files.len() {
        assert_eq!(t.content(i).len() as u64, t.files[i].bytes);
    }
    let mut all = Vec::new();
    for i in 0..t.files.len() {
        all.extend(t.content(i));
    }
    // Per 4 KiB block (as a file system compresses data nodes).
    let blocks: Vec<&[u8]> = all.chunks(4096).collect();
    let packed: usize = blocks.iter().map(|b| lz4_flex::block::compress(b).len()).sum();
    let lz4 = all.len() as f64 / packed as f64;
    let zlib = all.chunks(4096).map(zlib_ratio).sum::<f64>() / blocks.len() as f64;
    let whole = zlib_ratio(&all);
    eprintln!("lz4 per block {lz4:.2}x, zlib per block {zlib:.2}x, zlib whole {whole:.2}x");
    assert!((1.4..3.5).contains(&lz4), "lz4 {lz4}");
    assert!((2.2..4.5).contains(&zlib), "zlib per block {zlib}");
    assert!((2.8..5.0).contains(&whole), "zlib whole {whole}");
    assert!(all.iter().all(|b| b.is_ascii()));
}
