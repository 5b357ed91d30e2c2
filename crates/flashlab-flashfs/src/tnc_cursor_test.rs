//! `Tnc::lookup_near` against `Tnc::lookup`: after every step of random
//! inserts, removes and commits (data keys and directory entries, fan-outs
//! 3 to 9), ascending sweeps over data keys (present and absent, with
//! gaps) through one cursor each give every key the plain walk's answer.

use proptest::prelude::*;

use crate::key::Key;
use crate::node::Loc;
use crate::tnc::Tnc;

#[derive(Debug, Clone)]
enum Op {
    Insert(Key, u32),
    Remove(Key),
    Commit,
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        4 => (0u32..4, 0u32..80).prop_map(|(i, b)| Key::data(i, b)),
        1 => (0u32..4).prop_map(Key::ino),
        1 => (0u32..4, proptest::collection::vec(97u8..100, 1..4)).prop_map(|(i, n)| Key::dent(i, &n)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), any::<u32>()).prop_map(|(k, l)| Op::Insert(k, l)),
        3 => key().prop_map(Op::Remove),
        1 => Just(Op::Commit),
    ]
}

fn loc(x: u32) -> Loc {
    Loc { lnum: x % 7, offs: x / 7 % 4096 * 8, len: 40 + x % 64 }
}

/// Sweeps of every inode's data keys from `from` on, every `stride`-th block.
fn sweeps_agree(t: &Tnc, from: u32, stride: u32) -> Result<(), TestCaseError> {
    for inum in 0..4 {
        let mut leaf = None;
        for b in (from..80).step_by(stride as usize) {
            let k = Key::data(inum, b);
            prop_assert_eq!(t.lookup_near(&k, &mut leaf), t.lookup(&k), "inode {} block {}", inum, b);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_cursor_answers_as_the_walk(
        fanout in 3usize..10,
        ops in proptest::collection::vec(op(), 0..300),
        from in 0u32..8,
        stride in 1u32..4,
    ) {
        let mut t = Tnc::new(fanout);
        let mut sq = 0;
        for op in ops {
            match op {
                Op::Insert(k, l) => {
                    t.insert(&k, loc(l));
                }
                Op::Remove(k) => {
                    t.remove(&k);
                }
                Op::Commit => {
                    for (j, n) in t.dirty_postorder().into_iter().enumerate() {
                        sq += 1;
                        let mut out = Vec::new();
                        t.encode_idx_into(n, sq, &mut out);
                        t.set_written(n, Loc { lnum: 1 + j as u32 % 2, offs: 8 * j as u32, len: out.len() as u32 });
                    }
                    t.pending_obsolete.clear();
                }
            }
            sweeps_agree(&t, from, stride)?;
        }
    }
}
