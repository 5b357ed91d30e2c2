//! Fixed-length tables for the device-sized arrays (mapping tables, per-page and
//! per-block state) that want transparent huge pages.
//!
//! A multi-GiB mapping table is accessed at random: with 4 KiB pages nearly every
//! access misses the TLB, and at a few GiB the page-table entries themselves no
//! longer fit in the caches, so each miss walks to DRAM. On Linux a [`Table`] is an
//! anonymous private mapping advised `MADV_HUGEPAGE` (through `memmap2`'s safe
//! [`MmapMut::advise`]), so with the kernel's THP setting `madvise` (or `always`) it
//! is backed by 2 MiB pages; elsewhere, or where the advice is refused (THP
//! `never`, an old kernel), it is ordinary memory. The contents and every result are
//! the same either way: only the page size under them differs.
//!
//! The bytes are viewed as `[T]`: a mapping is page-aligned and its length is a
//! multiple of `size_of::<T>()`. The view is checked once, when the table is made
//! (`bytemuck::cast_slice_mut`), and its address and length kept: every later access
//! builds the slice from them (one `unsafe` block each way, soundness argued there)
//! instead of re-checking presence, alignment and length per access, which cost
//! ≈ 15 % of `counting-wasim`'s instructions (callgrind, s7-core).

use bytemuck::Pod;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// A fixed-length array of `T`, backed by huge pages where the system allows.
pub struct Table<T: Pod> {
    store: Store<T>,
}

#[cfg(unix)]
struct Store<T> {
    /// Exactly `len * size_of::<T>()` bytes (`None` for an empty table: a zero-length
    /// mapping does not exist).
    /// Owns the pages (read through `addr`/`len` only, so never read by name).
    #[allow(dead_code)]
    map: Option<memmap2::MmapMut>,
    /// Whether the kernel accepted `MADV_HUGEPAGE` for it.
    advised: bool,
    /// The checked view of `map` as `[T]`: its first element's address (provenance
    /// exposed, so the table stays `Send`/`Sync` like the `MmapMut` it owns; a dangling
    /// aligned address when `map` is `None`) and its length in elements.
    addr: usize,
    len: usize,
    _t: PhantomData<T>,
}

#[cfg(not(unix))]
struct Store<T> {
    vec: Vec<T>,
    _t: PhantomData<T>,
}

/// Tables smaller than one huge page gain nothing from the advice.
#[cfg(unix)]
const HUGE_PAGE_BYTES: usize = 2 << 20;

impl<T: Pod> Table<T> {
    /// `len` copies of `value`.
    ///
    /// # Panics
    /// When the memory cannot be had, like `vec![value; len]`.
    pub fn new(value: T, len: usize) -> Self {
        let mut t = Table { store: Store::zeroed(len) };
        if bytemuck::bytes_of(&value).iter().any(|&b| b != 0) {
            t.fill(value);
        }
        t
    }

    /// A table holding `values`.
    pub fn from_slice(values: &[T]) -> Self {
        let mut t = Table { store: Store::zeroed(values.len()) };
        t.copy_from_slice(values);
        t
    }

    /// Whether the table's memory was advised to use huge pages (the kernel may
    /// still decline to back it with them).
    pub fn huge_pages_advised(&self) -> bool {
        self.store.huge_pages_advised()
    }
}

#[cfg(unix)]
impl<T: Pod> Store<T> {
    fn zeroed(len: usize) -> Self {
        let bytes = len.checked_mul(size_of::<T>()).expect("table size overflows usize");
        let map = (bytes > 0).then(|| {
            memmap2::MmapMut::map_anon(bytes).unwrap_or_else(|e| panic!("cannot map {bytes} bytes for a table: {e}"))
        });
        // Refused where THP is off or unsupported: then 4 KiB pages, same contents.
        let advised =
            bytes >= HUGE_PAGE_BYTES && map.as_ref().is_some_and(|m| m.advise(memmap2::Advice::HugePage).is_ok());
        let mut map = map;
        let (addr, len) = match &mut map {
            Some(m) => {
                let view: &mut [T] = bytemuck::cast_slice_mut(m);
                (view.as_mut_ptr().expose_provenance(), view.len())
            }
            // A zero-length slice needs a non-null, aligned address and nothing more.
            None => (std::ptr::NonNull::<T>::dangling().as_ptr().expose_provenance(), 0),
        };
        Store { map, advised, addr, len, _t: PhantomData }
    }

    fn huge_pages_advised(&self) -> bool {
        self.advised
    }

    #[inline(always)]
    fn slice(&self) -> &[T] {
        // SAFETY: `addr`/`len` are the view `bytemuck::cast_slice_mut` checked in
        // `zeroed` (aligned for `T`, `len * size_of::<T>()` bytes, inside the mapping,
        // provenance exposed there). The mapping is owned by `self.map`, never unmapped,
        // moved or resized while `self` lives (moving the `MmapMut` does not move the
        // pages), and its bytes are initialised (zeroed, then written as `T`; `T: Pod`
        // makes any bytes a valid `T`); an empty table has a dangling, aligned, non-null
        // address, which a zero-length slice allows. The slice borrows `self`, so no `&mut` view
        // can coexist with it. Exercised by every test below and by every FTL test.
        unsafe { std::slice::from_raw_parts(std::ptr::with_exposed_provenance::<T>(self.addr), self.len) }
    }

    #[inline(always)]
    fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `slice`; the slice borrows `self` mutably, so it is the only
        // view of the mapping while it lives.
        unsafe { std::slice::from_raw_parts_mut(std::ptr::with_exposed_provenance_mut::<T>(self.addr), self.len) }
    }
}

#[cfg(not(unix))]
impl<T: Pod> Store<T> {
    fn zeroed(len: usize) -> Self {
        Store { vec: vec![T::zeroed(); len], _t: PhantomData }
    }
    fn huge_pages_advised(&self) -> bool {
        false
    }
    #[inline(always)]
    fn slice(&self) -> &[T] {
        &self.vec
    }
    #[inline(always)]
    fn slice_mut(&mut self) -> &mut [T] {
        &mut self.vec
    }
}

impl<T: Pod> Deref for Table<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.store.slice()
    }
}

impl<T: Pod> DerefMut for Table<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        self.store.slice_mut()
    }
}

impl<T: Pod> Clone for Table<T> {
    fn clone(&self) -> Self {
        Table::from_slice(self)
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Table<T> {
    /// As a `Vec` prints: the elements in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Pod + PartialEq> PartialEq for Table<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Pod + Eq> Eq for Table<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_holds_what_a_vec_holds() {
        for len in [0, 1, 7, 1024, (HUGE_PAGE_BYTES / 4) + 3] {
            let mut t = Table::new(u32::MAX, len);
            let mut v = vec![u32::MAX; len];
            assert_eq!(&*t, &v[..]);
            for i in (0..len).step_by(997) {
                t[i] = i as u32;
                v[i] = i as u32;
            }
            assert_eq!(&*t, &v[..]);
            assert_eq!(t.clone(), t);
            assert_eq!(format!("{t:?}").len(), format!("{v:?}").len());
        }
    }

    #[test]
    fn a_moved_or_sent_table_keeps_its_contents() {
        // The view is built from the address kept at creation: moving the table (into a
        // Vec, across a thread) must not move the mapping under it.
        let mut tables: Vec<Table<u64>> = (0..4).map(|i| Table::new(i, 1000 + i as usize)).collect();
        tables[2][999] = 7;
        let moved = tables.remove(2);
        let back = std::thread::spawn(move || {
            assert_eq!(moved.len(), 1002);
            assert_eq!((moved[0], moved[999], moved[1001]), (2, 7, 2));
            moved
        })
        .join()
        .unwrap();
        assert_eq!(back.iter().filter(|&&x| x == 2).count(), 1001);
        let empty: Table<[u32; 4]> = Table::new([1; 4], 0);
        assert!(empty.is_empty() && empty.clone().is_empty());
    }

    #[test]
    fn a_zero_fill_and_a_wide_type_work() {
        let mut t = Table::new(0u64, 5);
        t[4] = u64::MAX;
        assert_eq!(&*t, &[0, 0, 0, 0, u64::MAX]);
        assert!(!t.huge_pages_advised(), "a small table is not advised");
    }

    #[test]
    fn a_large_table_is_advised_where_the_kernel_has_thp() {
        let t = Table::new(1u32, HUGE_PAGE_BYTES);
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if thp.contains("[madvise]") || thp.contains("[always]") {
            assert!(t.huge_pages_advised());
        } else {
            println!("skipped: transparent huge pages unavailable ({})", thp.trim());
        }
        assert!(t.iter().all(|&x| x == 1));
    }
}
