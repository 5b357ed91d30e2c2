//! Index keys: 32-bit inode number, key type, 29-bit block number or name
//! hash; directory-entry keys also carry the name (resolving collisions).

use std::cmp::Ordering;

/// Key type (3 bits in UBIFS).
pub const KIND_INO: u8 = 0;
pub const KIND_DATA: u8 = 1;
pub const KIND_DENT: u8 = 2;

/// An index key, ordered by (inum, kind, sub, name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub inum: u32,
    pub kind: u8,
    /// Block number (data) or 29-bit name hash (dent); 0 for inodes.
    pub sub: u32,
    /// Entry name (dent keys only).
    pub name: Box<[u8]>,
}

/// The derived order, written out so that the name (a slice compare, a
/// `memcmp` call) is looked at only when both keys have one: inode and data
/// keys have none, and the index compares keys on every lookup.
impl Ord for Key {
    fn cmp(&self, o: &Key) -> Ordering {
        (self.inum, self.kind, self.sub).cmp(&(o.inum, o.kind, o.sub)).then_with(|| {
            if self.name.is_empty() || o.name.is_empty() {
                self.name.len().cmp(&o.name.len())
            } else {
                self.name.cmp(&o.name)
            }
        })
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Key) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Key {
    pub fn ino(inum: u32) -> Key {
        Key { inum, kind: KIND_INO, sub: 0, name: Box::new([]) }
    }

    pub fn data(inum: u32, block: u32) -> Key {
        Key { inum, kind: KIND_DATA, sub: block, name: Box::new([]) }
    }

    pub fn dent(parent: u32, name: &[u8]) -> Key {
        Key { inum: parent, kind: KIND_DENT, sub: name_hash(name), name: name.into() }
    }

    /// Smallest key of `inum` with `kind`.
    pub fn first(inum: u32, kind: u8) -> Key {
        Key { inum, kind, sub: 0, name: Box::new([]) }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.inum.to_le_bytes());
        out.push(self.kind);
        out.extend_from_slice(&self.sub.to_le_bytes());
        out.push(self.name.len() as u8);
        out.extend_from_slice(&self.name);
    }

    /// Decodes a key at the start of `b`; returns it and its length.
    pub fn decode(b: &[u8]) -> Option<(Key, usize)> {
        if b.len() < 10 {
            return None;
        }
        let inum = u32::from_le_bytes(b[0..4].try_into().ok()?);
        let sub = u32::from_le_bytes(b[5..9].try_into().ok()?);
        let n = b[9] as usize;
        let name = b.get(10..10 + n)?;
        Some((Key { inum, kind: b[4], sub, name: name.into() }, 10 + n))
    }
}

/// FxHash's multiplicative step, for sets of keys whose order nothing reads
/// (the index updates since the last commit, counted only): cheaper than
/// the default SipHash on every write.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|b| self.add(*b as u64));
    }
    fn write_u8(&mut self, x: u8) {
        self.add(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A set of keys hashed with [`KeyHasher`].
pub type KeySet = std::collections::HashSet<Key, std::hash::BuildHasherDefault<KeyHasher>>;

/// 29-bit FNV-1a hash of a name.
pub fn name_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name {
        h ^= *b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h & 0x1FFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written order is the derived one: (inum, kind, sub, name).
    #[test]
    fn order_is_lexicographic_over_the_fields() {
        let names: [&[u8]; 5] = [b"", b"a", b"ab", b"b", b"\xff"];
        let mut keys = Vec::new();
        for inum in [0, 1, 7] {
            for kind in [KIND_INO, KIND_DATA, KIND_DENT] {
                for sub in [0, 1, 0x1FFF_FFFF, u32::MAX] {
                    for name in names {
                        keys.push(Key { inum, kind, sub, name: name.into() });
                    }
                }
            }
        }
        for a in &keys {
            for b in &keys {
                let want = (a.inum, a.kind, a.sub, &a.name[..]).cmp(&(b.inum, b.kind, b.sub, &b.name[..]));
                assert_eq!(a.cmp(b), want, "{a:?} {b:?}");
                assert_eq!(a.partial_cmp(b), Some(want));
                assert_eq!(a == b, want == Ordering::Equal);
            }
        }
    }
}
