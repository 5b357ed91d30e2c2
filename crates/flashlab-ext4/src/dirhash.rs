//! ext4's directory-name hash, as `find_group_orlov` uses it to spread
//! top-level directories over the groups (fs/ext4/hash.c:
//! `ext4fs_dirhash` with `DX_HASH_HALF_MD4` and the superblock's
//! `s_hash_seed`; `str2hashbuf_signed`, `half_md4_transform`).

/// The seed mke2fs writes as `s_hash_seed` when given `-E hash_seed=UUID`:
/// the UUID's 16 bytes as four little-endian words. `None` for a string
/// that is not a UUID (8-4-4-4-12 hexadecimal digits).
pub fn parse_seed(uuid: &str) -> Option<[u32; 4]> {
    let groups: Vec<&str> = uuid.split('-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] || !groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_hexdigit())) {
        return None;
    }
    let hex: String = groups.concat();
    let mut bytes = [0u8; 16];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    let word = |i: usize| u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    Some([word(0), word(1), word(2), word(3)])
}

/// `ext4fs_dirhash(.., DX_HASH_HALF_MD4)`: the major hash of `name` (its
/// low bit cleared), with `seed` (MD4's initial state when all zero).
pub fn half_md4(name: &[u8], seed: [u32; 4]) -> u32 {
    let mut buf = if seed == [0; 4] { [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476] } else { seed };
    let mut p = name;
    while !p.is_empty() {
        let input = str2hashbuf(p, p.len());
        half_md4_transform(&mut buf, &input);
        p = &p[p.len().min(32)..];
    }
    let hash = buf[1] & !1;
    // EXT4_HTREE_EOF_32BIT << 1 is reserved.
    if hash == 0x7fff_ffff << 1 {
        (0x7fff_ffff - 1) << 1
    } else {
        hash
    }
}

/// `str2hashbuf_signed` for 8 words: bytes as signed chars, big-endian
/// within each word, padded with the length.
fn str2hashbuf(msg: &[u8], len: usize) -> [u32; 8] {
    let pad = {
        let p = (len as u32) | ((len as u32) << 8);
        p | (p << 16)
    };
    let mut out = [pad; 8];
    let mut val = pad;
    let mut k = 0;
    for (i, &b) in msg.iter().take(32).enumerate() {
        val = ((b as i8) as i32 as u32).wrapping_add(val << 8);
        if i % 4 == 3 {
            out[k] = val;
            k += 1;
            val = pad;
        }
    }
    if k < 8 {
        out[k] = val;
    }
    out
}

fn half_md4_transform(buf: &mut [u32; 4], x: &[u32; 8]) {
    const K2: u32 = 0o13240474631;
    const K3: u32 = 0o15666365641;
    let f = |x: u32, y: u32, z: u32| z ^ (x & (y ^ z));
    let g = |x: u32, y: u32, z: u32| (x & y).wrapping_add((x ^ y) & z);
    let h = |x: u32, y: u32, z: u32| x ^ y ^ z;
    let [mut a, mut b, mut c, mut d] = *buf;
    let step = |a: u32, v: u32, s: u32| a.wrapping_add(v).rotate_left(s);
    // Round 1.
    for i in [0, 4] {
        a = step(a, f(b, c, d).wrapping_add(x[i]), 3);
        d = step(d, f(a, b, c).wrapping_add(x[i + 1]), 7);
        c = step(c, f(d, a, b).wrapping_add(x[i + 2]), 11);
        b = step(b, f(c, d, a).wrapping_add(x[i + 3]), 19);
    }
    // Round 2.
    for i in [1, 0] {
        a = step(a, g(b, c, d).wrapping_add(x[i]).wrapping_add(K2), 3);
        d = step(d, g(a, b, c).wrapping_add(x[i + 2]).wrapping_add(K2), 5);
        c = step(c, g(d, a, b).wrapping_add(x[i + 4]).wrapping_add(K2), 9);
        b = step(b, g(c, d, a).wrapping_add(x[i + 6]).wrapping_add(K2), 13);
    }
    // Round 3.
    for i in [3, 1] {
        a = step(a, h(b, c, d).wrapping_add(x[i]).wrapping_add(K3), 3);
        d = step(d, h(a, b, c).wrapping_add(x[i + 4]).wrapping_add(K3), 9);
        c = step(c, h(d, a, b).wrapping_add(x[i - 1]).wrapping_add(K3), 11);
        b = step(b, h(c, d, a).wrapping_add(x[i + 3]).wrapping_add(K3), 15);
    }
    buf[0] = buf[0].wrapping_add(a);
    buf[1] = buf[1].wrapping_add(b);
    buf[2] = buf[2].wrapping_add(c);
    buf[3] = buf[3].wrapping_add(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from e2fsprogs 1.47.0: `debugfs -R "dx_hash -h half_md4 -s
    /// 8f6b1c2e-4d3a-4b5c-9e7f-0a1b2c3d4e5f NAME"` (and without `-s`).
    #[test]
    fn matches_debugfs_dx_hash() {
        let seed = parse_seed("8f6b1c2e-4d3a-4b5c-9e7f-0a1b2c3d4e5f").unwrap();
        assert_eq!(half_md4(b"cold", seed), 0x82a1_f042);
        assert_eq!(half_md4(b"a", seed), 0x77c5_431c);
        assert_eq!(half_md4(b"hot", seed), 0x8bd9_2124);
        assert_eq!(half_md4(b"lib", seed), 0x06f3_200c);
        assert_eq!(half_md4(b"a_rather_long_directory_name_exceeding_32_bytes_xyz", seed), 0x8238_148e);
        assert_eq!(half_md4(b"cold", [0; 4]), 0xe118_8de2);
    }

    #[test]
    fn seeds_parse_only_from_uuids() {
        assert_eq!(parse_seed("00000001-0000-0000-0000-000000000000"), Some([0x0100_0000, 0, 0, 0]));
        for bad in ["", "8f6b1c2e4d3a4b5c9e7f0a1b2c3d4e5f", "8f6b1c2e-4d3a-4b5c-9e7f-0a1b2c3d4e5g", "1-2-3-4-5"] {
            assert_eq!(parse_seed(bad), None, "{bad}");
        }
    }
}
