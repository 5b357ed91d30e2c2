//! Model-based test: random file operations through the page cache on the
//! F2FS model against an in-memory oracle of names, sizes and page tags;
//! the invariants after every operation; at the end every file read back
//! from the file system itself.

use super::{fs, strict};
use flashlab_f2fs::F2fsSettings;
use flashlab_vfs::{CacheSettings, Errno, FileSystem, PageCache};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Create(u8),
    Write(u8, u16, u8, u64),
    Truncate(u8, u16),
    Unlink(u8),
    Rename(u8, u8),
    Mkdir(u8),
    Rmdir(u8),
    Fsync(u8),
    Sync,
    Idle(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..12).prop_map(Op::Create),
        8 => (0u8..12, 0u16..600, 1u8..64, any::<u64>()).prop_map(|(f, p, n, t)| Op::Write(f, p, n, t)),
        2 => (0u8..12, 0u16..700).prop_map(|(f, p)| Op::Truncate(f, p)),
        2 => (0u8..12).prop_map(Op::Unlink),
        1 => (0u8..12, 0u8..12).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (0u8..3).prop_map(Op::Mkdir),
        1 => (0u8..3).prop_map(Op::Rmdir),
        1 => (0u8..12).prop_map(Op::Fsync),
        1 => Just(Op::Sync),
        1 => (0u8..70).prop_map(Op::Idle),
    ]
}

/// File `i` lives in directory `i % 4` (3 = the root).
fn path(i: u8) -> String {
    match i % 4 {
        3 => format!("/f{i}"),
        d => format!("/d{d}/f{i}"),
    }
}

#[derive(Default)]
struct Oracle {
    dirs: [bool; 3],
    /// path → page tags (0 = zero page); size in bytes is pages × 4096.
    files: BTreeMap<String, Vec<u64>>,
}

fn tc<E: std::fmt::Debug>(e: E) -> TestCaseError {
    TestCaseError::fail(format!("{e:?}"))
}

fn tag_page(t: u64) -> Vec<u8> {
    t.to_le_bytes().iter().copied().cycle().take(4096).collect()
}

fn run(cfg: F2fsSettings, phys_mib: u32, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut c = PageCache::new(fs(phys_mib, cfg), CacheSettings { memory_mib: 4, ..Default::default() }, 0);
    let mut o = Oracle::default();
    let mut now = 0u64;
    for (n, op) in ops.iter().enumerate() {
        let r: Result<(), Errno> = match op {
            Op::Create(i) => {
                let p = path(*i);
                let dir_ok = i % 4 == 3 || o.dirs[(i % 4) as usize];
                let r = c.create(&p).and_then(|fd| c.close(fd));
                match (&r, dir_ok, o.files.contains_key(&p)) {
                    (Ok(()), true, false) => {
                        o.files.insert(p, Vec::new());
                    }
                    (Err(e), true, true) => prop_assert_eq!(e.errno(), Errno::EEXIST),
                    (Err(e), false, _) => prop_assert_eq!(e.errno(), Errno::ENOENT),
                    (Err(e), true, false) => prop_assert_eq!(e.errno(), Errno::ENOSPC, "create"),
                    (Ok(()), _, _) => prop_assert!(false, "create {} succeeded wrongly", p),
                }
                Ok(())
            }
            Op::Write(i, pg, count, tag) => {
                let p = path(*i);
                if let Some(pages) = o.files.get_mut(&p) {
                    let fd = c.open(&p).map_err(|e| tc(e.errno()))?;
                    let mut ok = 0;
                    for k in 0..*count as u64 {
                        let t = tag.wrapping_add(k) | 1;
                        match c.write(fd, (*pg as u64 + k) * 4096, &tag_page(t)) {
                            Ok(_) => ok += 1,
                            Err(e) => {
                                prop_assert_eq!(e.errno(), Errno::ENOSPC, "write");
                                break;
                            }
                        }
                    }
                    for k in 0..ok {
                        let idx = (*pg as u64 + k) as usize;
                        if pages.len() <= idx {
                            pages.resize(idx + 1, 0);
                        }
                        pages[idx] = tag.wrapping_add(k) | 1;
                    }
                    c.close(fd).map_err(|e| tc(e.errno()))?;
                }
                Ok(())
            }
            Op::Truncate(i, pg) => {
                let p = path(*i);
                let r = c.truncate(&p, *pg as u64 * 4096);
                if let Some(pages) = o.files.get_mut(&p) {
                    match r {
                        Ok(()) => pages.resize(*pg as usize, 0),
                        Err(e) => prop_assert_eq!(e.errno(), Errno::ENOSPC, "truncate"),
                    }
                } else {
                    prop_assert!(r.is_err());
                }
                Ok(())
            }
            Op::Unlink(i) => {
                let p = path(*i);
                let r = c.unlink(&p);
                prop_assert_eq!(r.is_ok(), o.files.remove(&p).is_some());
                Ok(())
            }
            Op::Rename(a, b) => {
                let (pa, pb) = (path(*a), path(*b));
                let r = c.rename(&pa, &pb);
                let dir_ok = b % 4 == 3 || o.dirs[(b % 4) as usize];
                match o.files.get(&pa).cloned() {
                    Some(pages) if dir_ok => {
                        prop_assert!(r.is_ok(), "rename {} {}: {:?}", pa, pb, r.err());
                        o.files.remove(&pa);
                        o.files.insert(pb, pages);
                    }
                    _ => prop_assert!(r.is_err()),
                }
                Ok(())
            }
            Op::Mkdir(d) => {
                let r = c.mkdir(&format!("/d{d}"));
                if o.dirs[*d as usize] {
                    prop_assert!(r.is_err());
                } else if r.is_ok() {
                    o.dirs[*d as usize] = true;
                }
                Ok(())
            }
            Op::Rmdir(d) => {
                let r = c.rmdir(&format!("/d{d}"));
                let prefix = format!("/d{d}/");
                let empty = !o.files.keys().any(|k| k.starts_with(&prefix));
                if o.dirs[*d as usize] && empty {
                    prop_assert!(r.is_ok(), "rmdir: {:?}", r.err());
                    o.dirs[*d as usize] = false;
                } else {
                    prop_assert!(r.is_err());
                }
                Ok(())
            }
            Op::Fsync(i) => {
                let p = path(*i);
                if o.files.contains_key(&p) {
                    let fd = c.open(&p).map_err(|e| tc(e.errno()))?;
                    let r = c.fsync(fd);
                    if let Err(e) = &r {
                        prop_assert_eq!(e.errno(), Errno::ENOSPC, "fsync");
                    }
                    c.close(fd).map_err(|e| tc(e.errno()))?;
                }
                Ok(())
            }
            Op::Sync => {
                if let Err(e) = c.sync() {
                    prop_assert_eq!(e.errno(), Errno::ENOSPC, "sync");
                }
                Ok(())
            }
            Op::Idle(s) => {
                now = now.max(c.now_ns()) + *s as u64 * 1_000_000_000;
                if let Err(e) = c.idle_until(now) {
                    prop_assert_eq!(e.errno(), Errno::ENOSPC, "idle");
                }
                Ok(())
            }
        };
        prop_assert!(r.is_ok(), "op {} {:?}: {:?}", n, op, r);
        if let Err(e) = c.inner().check() {
            prop_assert!(false, "after op {} {:?}: {}", n, op, e);
        }
        for (p, pages) in &o.files {
            let st = c.stat(p).map_err(|e| TestCaseError::fail(format!("{p}: {e}")))?;
            prop_assert_eq!(st.size, pages.len() as u64 * 4096, "size of {}", p);
        }
    }
    // Everything written back and checkpointed; read from the file system itself.
    let mut f = match c.into_inner() {
        Ok(f) => f,
        Err((_, e)) => {
            prop_assert_eq!(e.errno(), Errno::ENOSPC, "unmount");
            return Ok(());
        }
    };
    f.check().map_err(|e| TestCaseError::fail(e.to_string()))?;
    for (p, pages) in &o.files {
        let fd = f.open(p).map_err(|e| TestCaseError::fail(format!("{p}: {e}")))?;
        let data = f.read(fd, 0, pages.len() * 4096).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(data.len(), pages.len() * 4096);
        for (k, t) in pages.iter().enumerate() {
            let want = if *t == 0 { vec![0u8; 4096] } else { tag_page(*t) };
            prop_assert!(data[k * 4096..(k + 1) * 4096] == want[..], "{} page {}", p, k);
        }
        f.close(fd).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_match_the_oracle(ops in prop::collection::vec(op(), 1..120)) {
        run(strict(), 160, &ops)?;
    }

    #[test]
    fn random_operations_on_a_nearly_full_volume(ops in prop::collection::vec(op(), 1..160)) {
        // 80 MiB physical → a 64 MiB volume: 2048 user blocks, so cleaning and SSR run.
        run(strict(), 80, &ops)?;
    }
}
