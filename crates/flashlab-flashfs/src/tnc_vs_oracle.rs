//! The flat TNC (`tnc.rs` over `tnc_arena.rs`) against the TNC it replaced
//! (`tnc_oracle.rs`, znodes with heap vectors of entries): random inserts,
//! removes, lookups, ranges, commits and index GC on both, with every
//! answer, every znode (arena index, level, dirty flag, location, entries),
//! the commit order, the obsoleted copies and the encoded index nodes equal
//! after every step. Keys include directory entries with names of every
//! length and forced hash collisions (equal packed words, different names).

use proptest::prelude::*;

use crate::key::{Key, KIND_DENT};
use crate::node::{Loc, G_NONE};
use crate::tnc::{Br, Tnc};
use crate::tnc_oracle::{OldBr, OldTnc};

#[derive(Debug, Clone)]
enum Op {
    Insert(Key, u32),
    Remove(Key),
    Lookup(Key),
    Range(Key, Key),
    Commit(u32),
    IndexGc(Vec<u32>),
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        (0u32..6, 0u32..40).prop_map(|(i, b)| Key::data(i, b)),
        (0u32..6).prop_map(Key::ino),
        (0u32..4, proptest::collection::vec(97u8..100, 1..4)).prop_map(|(i, n)| Key::dent(i, &n)),
        // Collisions: one hash, different names (and a nameless key with it).
        (0u32..3, proptest::collection::vec(97u8..100, 0..3)).prop_map(|(i, n)| Key {
            inum: i,
            kind: KIND_DENT,
            sub: 77,
            name: n.into()
        }),
        (0u32..3, 0u8..8, any::<u32>()).prop_map(|(i, k, s)| Key { inum: i, kind: k, sub: s, name: Box::new([]) }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), any::<u32>()).prop_map(|(k, l)| Op::Insert(k, l)),
        3 => key().prop_map(Op::Remove),
        2 => key().prop_map(Op::Lookup),
        1 => (key(), key()).prop_map(|(a, b)| Op::Range(a, b)),
        1 => (0u32..6).prop_map(Op::Commit),
        1 => proptest::collection::vec(0u32..6, 0..3).prop_map(Op::IndexGc),
    ]
}

fn loc(x: u32) -> Loc {
    Loc { lnum: x % 7, offs: x / 7 % 4096 * 8, len: 40 + x % 64 }
}

fn old_br(b: OldBr) -> Br {
    match b {
        OldBr::Leaf(l) => Br::Leaf(l),
        OldBr::Child(c) => Br::Child(c),
    }
}

fn same(t: &Tnc, o: &OldTnc) -> Result<(), TestCaseError> {
    prop_assert_eq!(t.root(), o.root());
    prop_assert_eq!(t.znodes(), o.znodes());
    for n in t.znodes() {
        let (a, b) = (t.node(n), o.node(n));
        prop_assert_eq!((a.level, a.dirty, a.loc), (b.level, b.dirty, b.loc), "znode {}", n);
        let want: Vec<(Key, Br)> = b.entries.iter().map(|(k, br)| (k.clone(), old_br(*br))).collect();
        prop_assert_eq!(t.entries(n), want, "znode {}", n);
        prop_assert_eq!(t.brs(n).len(), a.child_cnt());
    }
    prop_assert_eq!(t.dirty_postorder(), o.dirty_postorder());
    prop_assert_eq!(&t.pending_obsolete, &o.pending_obsolete);
    prop_assert_eq!((t.live_count(), t.dirty_count(), t.height()), (o.live_count(), o.dirty_count(), o.height()));
    prop_assert!(t.check().is_ok());
    Ok(())
}

fn step(t: &mut Tnc, o: &mut OldTnc, op: Op, sq: &mut u64) -> Result<(), TestCaseError> {
    match op {
        Op::Insert(k, l) => prop_assert_eq!(t.insert(&k, loc(l)), o.insert(&k, loc(l))),
        Op::Remove(k) => prop_assert_eq!(t.remove(&k), o.remove(&k)),
        Op::Lookup(k) => prop_assert_eq!(t.lookup(&k), o.lookup(&k)),
        Op::Range(a, b) => prop_assert_eq!(t.range(&a, &b), o.range(&a, &b)),
        Op::Commit(leb) => {
            for (j, n) in t.dirty_postorder().into_iter().enumerate() {
                *sq += 1;
                let mut out = Vec::new();
                t.encode_idx_into(n, *sq, &mut out);
                prop_assert_eq!(&out[..], &o.encode_idx(n).encode(*sq, G_NONE)[..]);
                prop_assert_eq!(crate::node::align(t.idx_node_len(n)), out.len());
                let l = Loc { lnum: leb + j as u32 % 2, offs: 8 * j as u32, len: out.len() as u32 };
                t.set_written(n, l);
                o.set_written(n, l);
            }
            t.pending_obsolete.clear();
            o.pending_obsolete.clear();
        }
        Op::IndexGc(lebs) => prop_assert_eq!(t.dirty_in_lebs(&lebs), o.dirty_in_lebs(&lebs)),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn flat_tnc_matches_the_old_tnc(fanout in 3usize..10, ops in proptest::collection::vec(op(), 0..400)) {
        let (mut t, mut o) = (Tnc::new(fanout), OldTnc::new(fanout));
        let mut sq = 0;
        for op in ops {
            step(&mut t, &mut o, op, &mut sq)?;
            same(&t, &o)?;
        }
    }
}
