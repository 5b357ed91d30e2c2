//! Allocation-free field splitting and number parsing on raw line bytes.

use std::borrow::Cow;

use crate::error::LineError;
use crate::format::{Request, SECTOR_BYTES};

/// Most fields kept per line; later fields are counted but not stored.
pub(crate) const MAX_FIELDS: usize = 32;

/// The fields of one line, borrowed from the line buffer. At most `N` fields
/// are stored (formats pick a small `N` to keep splitting cheap); later fields
/// are only counted.
pub(crate) struct Fields<'a, const N: usize = MAX_FIELDS> {
    items: [&'a [u8]; N],
    /// Number of fields on the line (may exceed `N`).
    total: usize,
}

/// ASCII whitespace as in `u8::is_ascii_whitespace`, testing the common case
/// (a printable byte) first.
#[inline(always)]
fn is_space(b: u8) -> bool {
    b <= b' ' && (b == b' ' || b == b'\t' || b == b'\n' || b == b'\r' || b == 0x0c)
}

impl<'a, const N: usize> Fields<'a, N> {
    /// Split on runs of ASCII whitespace (spaces, tabs, ...).
    #[inline]
    pub(crate) fn whitespace(line: &'a [u8]) -> Self {
        let mut fields = Fields { items: [&[]; N], total: 0 };
        let mut rest = line;
        while let Some(start) = rest.iter().position(|&b| !is_space(b)) {
            rest = &rest[start..];
            let end = rest.iter().position(|&b| is_space(b)).unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = &rest[end..];
        }
        fields
    }

    /// Split on commas; each field is trimmed of whitespace and of one pair of
    /// surrounding double quotes.
    #[inline]
    pub(crate) fn csv(line: &'a [u8]) -> Self {
        let mut fields = Fields { items: [&[]; N], total: 0 };
        for part in line.split(|&b| b == b',') {
            fields.push(unquote(part.trim_ascii()));
        }
        fields
    }

    #[inline(always)]
    fn push(&mut self, field: &'a [u8]) {
        if self.total < N {
            self.items[self.total] = field;
        }
        self.total += 1;
    }

    /// Number of fields on the line.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.total
    }

    /// Raw text of field `i` (0-based); empty if absent.
    #[inline]
    pub(crate) fn raw(&self, i: usize) -> &'a [u8] {
        if i < self.total.min(N) {
            self.items[i]
        } else {
            &[]
        }
    }

    /// Field `i` as an unsigned decimal integer.
    #[inline]
    pub(crate) fn u64_at(&self, i: usize, name: &'static str) -> Result<u64, LineError> {
        let raw = self.raw(i);
        parse_u64(raw).ok_or_else(|| bad_uint(name, i, raw))
    }

    /// Field `i` as an unsigned decimal integer that fits in 32 bits.
    #[inline]
    pub(crate) fn u32_at(&self, i: usize, name: &'static str) -> Result<u32, LineError> {
        let raw = self.raw(i);
        parse_u64(raw)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| LineError::field(name, i + 1, "an unsigned integer below 2^32", raw))
    }

    /// Field `i` as a sector number / count, returned in bytes.
    #[inline]
    pub(crate) fn sectors_at(&self, i: usize, name: &'static str) -> Result<u64, LineError> {
        let raw = self.raw(i);
        let v = parse_u64(raw).ok_or_else(|| bad_uint(name, i, raw))?;
        v.checked_mul(SECTOR_BYTES)
            .ok_or_else(|| LineError::field(name, i + 1, "a sector count whose byte value fits in 64 bits", raw))
    }

    /// Field `i` as decimal seconds (`12`, `0.000123`, `1.5e-05`), returned in nanoseconds
    /// (digits beyond nanoseconds are truncated).
    #[inline]
    pub(crate) fn seconds_at(&self, i: usize, name: &'static str) -> Result<u64, LineError> {
        let raw = self.raw(i);
        parse_seconds_ns(raw)
            .ok_or_else(|| LineError::field(name, i + 1, "a non-negative number of seconds below 2^64 ns", raw))
    }

    /// Field `i` as decimal milliseconds (`579.500020`), returned in nanoseconds.
    #[inline]
    pub(crate) fn millis_at(&self, i: usize, name: &'static str) -> Result<u64, LineError> {
        let raw = self.raw(i);
        parse_decimal_ns(raw, 6)
            .ok_or_else(|| LineError::field(name, i + 1, "a non-negative number of milliseconds below 2^64 ns", raw))
    }

    /// Field `i` as an integer count of `unit_ns` nanosecond ticks, returned in nanoseconds.
    #[inline]
    pub(crate) fn ticks_at(&self, i: usize, name: &'static str, unit_ns: u64) -> Result<u64, LineError> {
        let raw = self.raw(i);
        let v = parse_u64(raw).ok_or_else(|| bad_uint(name, i, raw))?;
        v.checked_mul(unit_ns)
            .ok_or_else(|| LineError::field(name, i + 1, "a time whose value in nanoseconds fits in 64 bits", raw))
    }
}

#[cold]
fn bad_uint(name: &'static str, i: usize, raw: &[u8]) -> LineError {
    LineError::field(name, i + 1, "an unsigned integer", raw)
}

fn unquote(field: &[u8]) -> &[u8] {
    match field {
        [b'"', inner @ .., b'"'] => inner,
        _ => field,
    }
}

/// Validate a request built from a line: `len_bytes > 0` and `offset + len` fits in
/// `u64`. `len_idx`/`len_field` name the length field for error messages.
#[inline]
pub(crate) fn check_request<const N: usize>(
    req: Request,
    fields: &Fields<'_, N>,
    len_idx: usize,
    len_field: &'static str,
) -> Result<Request, LineError> {
    let raw = fields.raw(len_idx);
    if req.len_bytes == 0 {
        return Err(LineError::field(len_field, len_idx + 1, "a length greater than 0", raw));
    }
    if req.offset_bytes.checked_add(req.len_bytes).is_none() {
        let expected = Cow::Owned(format!(
            "a length that keeps the end address (offset {} B + length) below 2^64 bytes",
            req.offset_bytes
        ));
        return Err(LineError::field(len_field, len_idx + 1, expected, raw));
    }
    Ok(req)
}

/// Parse an unsigned decimal integer (ASCII digits only, no sign).
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    if s.len() > 19 {
        return parse_u64_long(s);
    }
    // At most 19 digits: cannot overflow.
    let mut v: u64 = 0;
    let mut rest = s;
    while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
        v = v * 100_000_000 + eight_digits(*chunk)?;
        rest = tail;
    }
    for &b in rest {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

#[cold]
fn parse_u64_long(s: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Value of eight ASCII digits (first byte most significant), SWAR style.
#[inline]
fn eight_digits(chunk: [u8; 8]) -> Option<u64> {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let v = u64::from_le_bytes(chunk).wrapping_sub(0x3030_3030_3030_3030);
    // Every byte must now be 0..=9: no high nibble, even after adding 6.
    if v & HIGH_NIBBLES != 0 || v.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES != 0 {
        return None;
    }
    let v = (v.wrapping_mul(10 * 256 + 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100 * 65_536 + 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    Some(v.wrapping_mul((10_000 << 32) + 1) >> 32)
}

/// Parse a hexadecimal integer (optional `0x` prefix) below 2^32.
pub(crate) fn parse_hex_u32(s: &[u8]) -> Option<u32> {
    let digits = s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")).unwrap_or(s);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let mut v: u32 = 0;
    for &b in digits {
        let d = (b as char).to_digit(16)?;
        v = (v << 4) | d;
    }
    Some(v)
}

/// Parse non-negative decimal seconds (`[+]digits[.digits][(e|E)[+-]digits]`) into
/// nanoseconds, truncating below 1 ns. `None` on syntax errors, negative values
/// and values of 2^64 ns or more.
pub(crate) fn parse_seconds_ns(s: &[u8]) -> Option<u64> {
    parse_decimal_ns(s, 9)
}

/// Parse a non-negative decimal number of units of 10^`unit_exp10` ns (9 = seconds,
/// 6 = milliseconds) into nanoseconds, truncating below 1 ns; syntax as [`parse_seconds_ns`].
pub(crate) fn parse_decimal_ns(s: &[u8], unit_exp10: i64) -> Option<u64> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (mantissa, exp_part) = match s.iter().position(|&b| b == b'e' || b == b'E') {
        Some(p) => (&s[..p], Some(&s[p + 1..])),
        None => (s, None),
    };
    let (int_part, frac_part) = match mantissa.iter().position(|&b| b == b'.') {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, &mantissa[mantissa.len()..]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let exp = match exp_part {
        Some(e) => parse_exponent(e)?,
        None => 0,
    };
    let (digits, scale) = collect_digits(int_part, frac_part)?;
    // value = digits * 10^(exp - scale) units = digits * 10^(exp - scale + unit_exp10) ns
    scale_pow10(digits, exp - scale + unit_exp10)
}

/// Accumulate up to 38 significant digits; returns (digits, number of those digits
/// that are after the decimal point, minus integer digits dropped).
fn collect_digits(int_part: &[u8], frac_part: &[u8]) -> Option<(u128, i64)> {
    const MAX_DIGITS: u32 = 38;
    let mut value: u128 = 0;
    let mut used: u32 = 0;
    let mut scale: i64 = 0;
    for &b in int_part {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        if used < MAX_DIGITS {
            value = value * 10 + u128::from(d);
            if value > 0 {
                used += 1;
            }
        } else {
            scale -= 1; // dropped integer digit: multiply by 10 later
        }
    }
    for &b in frac_part {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        if used < MAX_DIGITS {
            value = value * 10 + u128::from(d);
            if value > 0 {
                used += 1;
            }
            scale += 1;
        }
    }
    Some((value, scale))
}

fn parse_exponent(e: &[u8]) -> Option<i64> {
    let (neg, digits) = match e.first() {
        Some(b'-') => (true, &e[1..]),
        Some(b'+') => (false, &e[1..]),
        _ => (false, e),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = (v * 10 + i64::from(d)).min(1_000_000);
    }
    Some(if neg { -v } else { v })
}

fn scale_pow10(digits: u128, exp10: i64) -> Option<u64> {
    if digits == 0 {
        return Some(0);
    }
    let value = if exp10 >= 0 {
        let p = u32::try_from(exp10).ok().filter(|&p| p <= 38)?;
        digits.checked_mul(10u128.pow(p))?
    } else {
        match u32::try_from(-exp10).ok().filter(|&p| p <= 38) {
            Some(p) => digits / 10u128.pow(p),
            None => 0,
        }
    };
    u64::try_from(value).ok()
}

/// ASCII case-insensitive equality.
#[inline]
pub(crate) fn eq_ic(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Write `ns` as decimal seconds with exactly nine fractional digits.
pub(crate) fn write_seconds<W: std::io::Write + ?Sized>(w: &mut W, ns: u64) -> std::io::Result<()> {
    write!(w, "{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// Round a byte range outward to whole sectors: (first sector, sector count).
pub(crate) fn to_sectors(offset_bytes: u64, len_bytes: u64) -> (u64, u64) {
    let first = offset_bytes / SECTOR_BYTES;
    let end = offset_bytes.saturating_add(len_bytes).div_ceil(SECTOR_BYTES);
    (first, end - first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_parsing() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999999"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"12x"), None);
        assert_eq!(parse_u64(b"007"), Some(7));
    }

    #[test]
    fn eight_digit_chunks() {
        assert_eq!(eight_digits(*b"12345678"), Some(12_345_678));
        assert_eq!(eight_digits(*b"00000000"), Some(0));
        assert_eq!(eight_digits(*b"99999999"), Some(99_999_999));
        for bad in [b"1234567/", b"1234567:", b"/2345678", b"12 45678", b"\xff2345678"] {
            assert_eq!(eight_digits(*bad), None);
        }
    }

    proptest::proptest! {
        #[test]
        fn parse_u64_matches_std(s in "[0-9]{0,22}|[0-9/:a ]{0,20}") {
            proptest::prop_assert_eq!(parse_u64(s.as_bytes()), s.parse::<u64>().ok().filter(|_| !s.starts_with('+')));
        }

        #[test]
        fn parse_u64_any_value(v: u64) {
            proptest::prop_assert_eq!(parse_u64(v.to_string().as_bytes()), Some(v));
            proptest::prop_assert_eq!(parse_u64(format!("{v:020}").as_bytes()), Some(v));
        }
    }

    #[test]
    fn hex_parsing() {
        assert_eq!(parse_hex_u32(b"2a"), Some(0x2a));
        assert_eq!(parse_hex_u32(b"0x2A"), Some(0x2a));
        assert_eq!(parse_hex_u32(b"g"), None);
        assert_eq!(parse_hex_u32(b""), None);
        assert_eq!(parse_hex_u32(b"123456789"), None);
    }

    #[test]
    fn seconds_parsing() {
        assert_eq!(parse_seconds_ns(b"0.000000000"), Some(0));
        assert_eq!(parse_seconds_ns(b"1"), Some(1_000_000_000));
        assert_eq!(parse_seconds_ns(b"0.551706"), Some(551_706_000));
        assert_eq!(parse_seconds_ns(b"12.345678901"), Some(12_345_678_901));
        assert_eq!(parse_seconds_ns(b"12.3456789019"), Some(12_345_678_901));
        assert_eq!(parse_seconds_ns(b"7.3902e-05"), Some(73_902));
        assert_eq!(parse_seconds_ns(b"1.5E+3"), Some(1_500_000_000_000));
        assert_eq!(parse_seconds_ns(b".5"), Some(500_000_000));
        assert_eq!(parse_seconds_ns(b"5."), Some(5_000_000_000));
        assert_eq!(parse_seconds_ns(b"18446744073.709551615"), Some(u64::MAX));
        assert_eq!(parse_seconds_ns(b"18446744073.709551616"), None);
        assert_eq!(parse_seconds_ns(b"1e999999999999"), None);
        assert_eq!(parse_seconds_ns(b"1e-999999999999"), Some(0));
        assert_eq!(parse_seconds_ns(b"0e999999"), Some(0));
        assert_eq!(parse_seconds_ns(b"-1"), None);
        assert_eq!(parse_seconds_ns(b"."), None);
        assert_eq!(parse_seconds_ns(b"1e"), None);
        assert_eq!(parse_seconds_ns(b"1..2"), None);
        assert_eq!(parse_seconds_ns(b"nan"), None);
        let many = b"0.0000000000000000000000000000000000000000000000001234";
        assert_eq!(parse_seconds_ns(many), Some(0));
        let big = b"123456789012345678901234567890123456789012345";
        assert_eq!(parse_seconds_ns(big), None);
    }

    #[test]
    fn splitting() {
        let f = Fields::<32>::whitespace(b"  8,0    3 \t 1  ");
        assert_eq!(f.len(), 3);
        assert_eq!(f.raw(0), b"8,0");
        assert_eq!(f.raw(2), b"1");
        assert_eq!(f.raw(3), b"");
        let f = Fields::<32>::csv(b" a , \"b\" ,,c");
        assert_eq!(f.len(), 4);
        assert_eq!(f.raw(1), b"b");
        assert_eq!(f.raw(2), b"");
        let many = b"1 ".repeat(100);
        let f = Fields::<32>::whitespace(&many);
        assert_eq!(f.len(), 100);
        assert_eq!(f.raw(50), b"");
        let f = Fields::<2>::whitespace(b"a b c");
        assert_eq!((f.len(), f.raw(1), f.raw(2)), (3, &b"b"[..], &b""[..]));
    }

    #[test]
    fn sector_rounding() {
        assert_eq!(to_sectors(0, 512), (0, 1));
        assert_eq!(to_sectors(511, 2), (0, 2));
        assert_eq!(to_sectors(1024, 4096), (2, 8));
        assert_eq!(to_sectors(1000, 1), (1, 1));
    }
}
