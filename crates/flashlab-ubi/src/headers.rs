//! On-flash EC and VID headers (64 bytes each, CRC-32 in the last 4 bytes).
//!
//! EC header:  0 magic "UBI#" | 4 version | 8 ec u64 | 16 vid_hdr_offset u32
//!             | 20 data_offset u32 | 24 image_seq u32 | 28..60 zero | 60 crc
//! VID header: 0 magic "UBI!" | 4 version | 5 vol_type | 6 copy_flag | 7 compat
//!             | 8 vol_id u32 | 12 lnum u32 | 16 data_size u32 | 20 used_ebs u32
//!             | 24 data_pad u32 | 28 data_crc u32 | 32 sqnum u64 | 40..60 zero
//!             | 60 crc.  All integers big-endian.

pub const HDR_BYTES: usize = 64;
const EC_MAGIC: &[u8; 4] = b"UBI#";
const VID_MAGIC: &[u8; 4] = b"UBI!";
const VERSION: u8 = 1;

/// Erase-counter header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcHdr {
    pub ec: u64,
    pub vid_hdr_offset: u32,
    pub data_offset: u32,
    pub image_seq: u32,
}

/// Volume-identifier header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VidHdr {
    pub vol_id: u32,
    pub lnum: u32,
    pub sqnum: u64,
    /// Set for copies (wear levelling, scrubbing, atomic LEB change):
    /// then `data_size` bytes are covered by `data_crc`.
    pub copy_flag: bool,
    pub data_size: u32,
    pub data_crc: u32,
}

/// What a header slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<T> {
    /// All bytes 0xFF.
    Empty,
    /// Bad magic or CRC.
    Corrupt,
    Valid(T),
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

fn seal(b: &mut [u8; HDR_BYTES]) {
    let crc = crc32fast::hash(&b[..60]);
    put_u32(b, 60, crc);
}

fn classify(b: &[u8], magic: &[u8; 4]) -> Option<Parsed<()>> {
    if b.len() < HDR_BYTES {
        return Some(Parsed::Corrupt);
    }
    if b[..HDR_BYTES].iter().all(|x| *x == 0xFF) {
        return Some(Parsed::Empty);
    }
    if &b[..4] != magic || crc32fast::hash(&b[..60]) != get_u32(b, 60) {
        return Some(Parsed::Corrupt);
    }
    None
}

impl EcHdr {
    pub fn encode(&self) -> [u8; HDR_BYTES] {
        let mut b = [0u8; HDR_BYTES];
        b[..4].copy_from_slice(EC_MAGIC);
        b[4] = VERSION;
        put_u64(&mut b, 8, self.ec);
        put_u32(&mut b, 16, self.vid_hdr_offset);
        put_u32(&mut b, 20, self.data_offset);
        put_u32(&mut b, 24, self.image_seq);
        seal(&mut b);
        b
    }

    pub fn decode(b: &[u8]) -> Parsed<EcHdr> {
        if let Some(p) = classify(b, EC_MAGIC) {
            return if p == Parsed::Empty { Parsed::Empty } else { Parsed::Corrupt };
        }
        Parsed::Valid(EcHdr {
            ec: get_u64(b, 8),
            vid_hdr_offset: get_u32(b, 16),
            data_offset: get_u32(b, 20),
            image_seq: get_u32(b, 24),
        })
    }
}

impl VidHdr {
    pub fn encode(&self) -> [u8; HDR_BYTES] {
        let mut b = [0u8; HDR_BYTES];
        b[..4].copy_from_slice(VID_MAGIC);
        b[4] = VERSION;
        b[5] = 1;
        b[6] = self.copy_flag as u8;
        put_u32(&mut b, 8, self.vol_id);
        put_u32(&mut b, 12, self.lnum);
        put_u32(&mut b, 16, self.data_size);
        put_u32(&mut b, 28, self.data_crc);
        put_u64(&mut b, 32, self.sqnum);
        seal(&mut b);
        b
    }

    pub fn decode(b: &[u8]) -> Parsed<VidHdr> {
        if let Some(p) = classify(b, VID_MAGIC) {
            return if p == Parsed::Empty { Parsed::Empty } else { Parsed::Corrupt };
        }
        Parsed::Valid(VidHdr {
            vol_id: get_u32(b, 8),
            lnum: get_u32(b, 12),
            copy_flag: b[6] != 0,
            data_size: get_u32(b, 16),
            data_crc: get_u32(b, 28),
            sqnum: get_u64(b, 32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_corruption() {
        let e = EcHdr { ec: 7, vid_hdr_offset: 512, data_offset: 2048, image_seq: 9 };
        let mut b = e.encode();
        assert_eq!(EcHdr::decode(&b), Parsed::Valid(e));
        b[9] ^= 1;
        assert_eq!(EcHdr::decode(&b), Parsed::Corrupt);
        assert_eq!(EcHdr::decode(&[0xFF; 64]), Parsed::Empty);
        let v = VidHdr { vol_id: 3, lnum: 4, sqnum: 99, copy_flag: true, data_size: 10, data_crc: 5 };
        assert_eq!(VidHdr::decode(&v.encode()), Parsed::Valid(v));
        assert_eq!(VidHdr::decode(&e.encode()), Parsed::Corrupt);
    }
}
