//! Model-based test: random file operations on ext4 under the page cache
//! against an in-memory oracle of names, sizes and contents; invariants
//! checked after every operation, contents read back through the file
//! system alone at the end.

use super::ssd;
use flashlab_ext4::{Content, Ext4, Ext4Settings};
use flashlab_vfs::{CacheSettings, Errno, FileSystem, PageCache};
use proptest::prelude::*;
use std::collections::BTreeMap;

const FILES: [&str; 6] = ["/a", "/b", "/c", "/d0/a", "/d0/b", "/d1/d2/a"];
const DIRS: [&str; 3] = ["/d0", "/d1", "/d1/d2"];

#[derive(Debug, Clone)]
enum Op {
    Create(usize),
    Write(usize, u64, usize, u8),
    Truncate(usize, u64),
    Unlink(usize),
    Rename(usize, usize),
    Mkdir(usize),
    Rmdir(usize),
    Fsync(usize),
    Sync,
    Idle(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let f = 0..FILES.len();
    let d = 0..DIRS.len();
    prop_oneof![
        3 => f.clone().prop_map(Op::Create),
        6 => (f.clone(), 0u64..40_000, 1usize..12_000, any::<u8>()).prop_map(|(i, o, l, b)| Op::Write(i, o, l, b)),
        2 => (f.clone(), 0u64..30_000).prop_map(|(i, s)| Op::Truncate(i, s)),
        2 => f.clone().prop_map(Op::Unlink),
        2 => (f.clone(), f.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        2 => d.clone().prop_map(Op::Mkdir),
        1 => d.prop_map(Op::Rmdir),
        2 => f.prop_map(Op::Fsync),
        1 => Just(Op::Sync),
        1 => (1u64..40_000).prop_map(Op::Idle),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    File(Vec<u8>),
    Dir,
}

#[derive(Default)]
struct Oracle {
    nodes: BTreeMap<String, Node>,
}

fn parent(p: &str) -> &str {
    match p.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &p[..i],
    }
}

impl Oracle {
    fn dir_ok(&self, p: &str) -> Result<(), Errno> {
        match p {
            "/" => Ok(()),
            _ => match self.nodes.get(p) {
                Some(Node::Dir) => Ok(()),
                Some(Node::File(_)) => Err(Errno::ENOTDIR),
                None => Err(Errno::ENOENT),
            },
        }
    }

    fn file(&self, p: &str) -> Result<(), Errno> {
        self.dir_ok(parent(p))?;
        match self.nodes.get(p) {
            Some(Node::File(_)) => Ok(()),
            Some(Node::Dir) => Err(Errno::EISDIR),
            None => Err(Errno::ENOENT),
        }
    }

    fn children(&self, p: &str) -> usize {
        self.nodes.keys().filter(|k| parent(k) == p && k.as_str() != p).count()
    }
}

fn errno<T>(r: Result<T, flashlab_ext4::Ext4Error>) -> Result<T, Errno> {
    r.map_err(|e| e.errno())
}

fn apply(c: &mut PageCache<Ext4>, o: &mut Oracle, op: &Op) {
    match *op {
        Op::Create(i) => {
            let p = FILES[i];
            let want =
                o.dir_ok(parent(p)).and_then(|_| if o.nodes.contains_key(p) { Err(Errno::EEXIST) } else { Ok(()) });
            let got = errno(c.create(p)).and_then(|fd| errno(c.close(fd)));
            assert_eq!(got, want, "{op:?}");
            if got.is_ok() {
                o.nodes.insert(p.into(), Node::File(Vec::new()));
            }
        }
        Op::Write(i, off, len, b) => {
            let p = FILES[i];
            let want = o.file(p);
            let data: Vec<u8> = (0..len).map(|k| b.wrapping_add((k / 97) as u8)).collect();
            let got = errno(c.open(p)).and_then(|fd| {
                let r = errno(c.write(fd, off, &data));
                errno(c.close(fd))?;
                r.map(|_| ())
            });
            assert_eq!(got, want, "{op:?}");
            if let Some(Node::File(v)) = o.nodes.get_mut(p).filter(|_| got.is_ok()) {
                let end = off as usize + len;
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[off as usize..end].copy_from_slice(&data);
            }
        }
        Op::Truncate(i, size) => {
            let p = FILES[i];
            let want = o.file(p);
            assert_eq!(errno(c.truncate(p, size)), want, "{op:?}");
            if let Some(Node::File(v)) = o.nodes.get_mut(p).filter(|_| want.is_ok()) {
                v.resize(size as usize, 0);
            }
        }
        Op::Unlink(i) => {
            let p = FILES[i];
            let want = o.file(p);
            assert_eq!(errno(c.unlink(p)), want, "{op:?}");
            if want.is_ok() {
                o.nodes.remove(p);
            }
        }
        Op::Rename(a, b) => {
            let (from, to) = (FILES[a], FILES[b]);
            let want = o.file(from).and_then(|_| o.dir_ok(parent(to))).and_then(|_| match o.nodes.get(to) {
                Some(Node::Dir) => Err(Errno::EISDIR),
                _ => Ok(()),
            });
            assert_eq!(errno(c.rename(from, to)), want, "{op:?}");
            if want.is_ok() && from != to {
                let n = o.nodes.remove(from).unwrap();
                o.nodes.insert(to.into(), n);
            }
        }
        Op::Mkdir(i) => {
            let p = DIRS[i];
            let want =
                o.dir_ok(parent(p)).and_then(|_| if o.nodes.contains_key(p) { Err(Errno::EEXIST) } else { Ok(()) });
            assert_eq!(errno(c.mkdir(p)), want, "{op:?}");
            if want.is_ok() {
                o.nodes.insert(p.into(), Node::Dir);
            }
        }
        Op::Rmdir(i) => {
            let p = DIRS[i];
            let want = o.dir_ok(parent(p)).and_then(|_| match o.nodes.get(p) {
                Some(Node::Dir) if o.children(p) > 0 => Err(Errno::ENOTEMPTY),
                Some(Node::Dir) => Ok(()),
                Some(Node::File(_)) => Err(Errno::ENOTDIR),
                None => Err(Errno::ENOENT),
            });
            let got = errno(c.rmdir(p));
            assert_eq!(got, want, "{op:?}");
            if want.is_ok() {
                o.nodes.remove(p);
            }
        }
        Op::Fsync(i) => {
            let p = FILES[i];
            let want = o.file(p);
            let got = errno(c.open(p)).and_then(|fd| {
                let r = errno(c.fsync(fd));
                errno(c.close(fd))?;
                r
            });
            assert_eq!(got, want, "{op:?}");
        }
        Op::Sync => c.sync().unwrap(),
        Op::Idle(ms) => {
            let t = c.now_ns() + ms * 1_000_000;
            c.idle_until(t).unwrap();
        }
    }
}

fn compare_sizes(c: &mut PageCache<Ext4>, o: &Oracle) {
    for (p, n) in &o.nodes {
        let st = c.stat(p).unwrap();
        match n {
            Node::File(v) => assert_eq!((st.is_dir, st.size), (false, v.len() as u64), "{p}"),
            Node::Dir => assert!(st.is_dir, "{p}"),
        }
    }
    let mut names: Vec<String> = c.readdir("/").unwrap().into_iter().map(|e| format!("/{}", e.name)).collect();
    names.retain(|n| n != "/lost+found");
    let want: Vec<String> = o.nodes.keys().filter(|k| parent(k) == "/").cloned().collect();
    assert_eq!(names, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn random_operations_match_the_oracle(ops in prop::collection::vec(op(), 1..45), discard in any::<bool>()) {
        let s = Ext4Settings { journal_mib: 4, group_mib: 4, content: Content::Bytes, discard, strict: true, metadata_expire_s: 10, ..Ext4Settings::default() };
        let fs = Ext4::format(ssd(64, true), s).unwrap();
        let cache = CacheSettings { memory_mib: 1, ..CacheSettings::default() };
        let mut c = PageCache::new(fs, cache, 0);
        let mut o = Oracle::default();
        for op in &ops {
            apply(&mut c, &mut o, op);
            c.inner().check().unwrap();
            compare_sizes(&mut c, &o);
        }
        // Everything written back; read through ext4 alone.
        let mut fs = c.into_inner().map_err(|(_, e)| e).unwrap();
        fs.check().unwrap();
        for (p, n) in &o.nodes {
            if let Node::File(v) = n {
                let fd = fs.open(p).unwrap();
                let got = fs.read(fd, 0, v.len() + 10).unwrap();
                fs.close(fd).unwrap();
                prop_assert!(got == *v, "{}: contents differ", p);
            }
        }
    }
}
