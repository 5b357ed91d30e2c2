//! Read-ahead: Linux's on-demand read-ahead window of one open file
//! (mm/readahead.c, Linux 6.1–6.9: `ondemand_readahead`,
//! `get_init_ra_size`, `get_next_ra_size`, `try_context_readahead`;
//! `page_cache_sync_ra` on a cache miss, `page_cache_async_ra` on a page
//! marked `PG_readahead`). Pure arithmetic: the page cache (`cache.rs`)
//! says which pages are cached and reads what the window asks for
//! (`do_page_cache_ra`).
//!
//! The window `[start, start + size)` is read ahead; the page at
//! `start + size - async_size` is marked so that a read reaching it starts
//! the next window before the application needs it. A read at the start
//! of a file, right after the previous read (`prev_pos`), or larger than
//! the maximum window starts a window of `get_init_ra_size`; a read after
//! a run of cached pages grows one from that history (context
//! read-ahead); any other read reads just the pages asked for.

/// `struct file_ra_state`: the most recent read-ahead of one open file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Byte just past the previous read (`prev_pos`; `None` is the
    /// kernel's -1 of a newly opened file).
    pub prev_pos: Option<u64>,
}

/// Pages to read from `start`: `nr` of them, the page at `start + nr -
/// lookahead` marked (none when `lookahead` is 0), as `do_page_cache_ra`
/// takes them (the caller clips to the end of the file and skips cached
/// pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RaRead {
    pub start: u64,
    pub nr: u64,
    pub lookahead: u64,
}

/// `get_init_ra_size`: the first window for a read of `req` pages.
fn init_size(req: u64, max: u64) -> u64 {
    let size = req.next_power_of_two();
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages.
fn next_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// `ondemand_readahead` for a read of `req` pages at page `index`, with at
/// most `max` pages per window (`ra_pages`). `marked` is true when called
/// from a page marked `PG_readahead` (`page_cache_async_ra`), false on a
/// miss (`page_cache_sync_ra`). `cached(i)` tells whether page `i` is in
/// the cache. `None`: nothing to read.
pub(crate) fn ondemand(
    ra: &mut RaState,
    max: u64,
    index: u64,
    req: u64,
    marked: bool,
    cached: impl Fn(u64) -> bool,
) -> Option<RaRead> {
    if index == 0 {
        return Some(initial(ra, index, req, max));
    }
    // The expected callback index: sequential, push the window forward.
    if index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size {
        ra.start += ra.size;
        ra.size = next_size(ra.size, max);
        ra.async_size = ra.size;
        return Some(readit(ra, index, max));
    }
    // A marked page without valid state (interleaved reads): the cached
    // run after it stands for the old async size.
    if marked {
        let start = next_miss(index + 1, max, &cached);
        if start - index - 1 > max {
            return None;
        }
        let start = if start - index - 1 == max { start - 1 } else { start };
        ra.start = start;
        ra.size = next_size(start - index + req, max);
        ra.async_size = ra.size;
        return Some(readit(ra, index, max));
    }
    if req > max {
        return Some(initial(ra, index, req, max));
    }
    // A sequential miss: right after (or inside) the previous read.
    if let Some(prev) = ra.prev_pos {
        if index.wrapping_sub(prev / crate::PAGE_BYTES) <= 1 {
            return Some(initial(ra, index, req, max));
        }
    }
    // try_context_readahead: the cached history before the read.
    let history = count_history(index, max, &cached);
    if history > req {
        let size = if history >= index { history * 2 } else { history };
        ra.start = index;
        ra.size = (size + req).min(max);
        ra.async_size = 1;
        return Some(readit(ra, index, max));
    }
    // A standalone small random read: just the pages asked for; the state
    // is left alone.
    Some(RaRead { start: index, nr: req, lookahead: 0 })
}

fn initial(ra: &mut RaState, index: u64, req: u64, max: u64) -> RaRead {
    ra.start = index;
    ra.size = init_size(req, max);
    ra.async_size = if ra.size > req { ra.size - req } else { ra.size };
    readit(ra, index, max)
}

/// `readit`: a read that would hit its own marker merges the next window
/// into this one.
fn readit(ra: &mut RaState, index: u64, max: u64) -> RaRead {
    if index == ra.start && ra.size == ra.async_size {
        let add = next_size(ra.size, max);
        if ra.size + add <= max {
            ra.async_size = add;
            ra.size += add;
        } else {
            ra.size = max;
            ra.async_size = max >> 1;
        }
    }
    RaRead { start: ra.start, nr: ra.size, lookahead: ra.async_size }
}

/// `page_cache_next_miss(index, max)`: the first page at or after `index`
/// not cached, looking at `max` pages (`index + max` if all are).
fn next_miss(index: u64, max: u64, cached: &impl Fn(u64) -> bool) -> u64 {
    (index..index + max).find(|i| !cached(*i)).unwrap_or(index + max)
}

/// `count_history_pages`: cached pages right before `index`, at most
/// `max`; every page before `index` when the file is cached from its start
/// (the kernel's scan then wraps past page 0).
fn count_history(index: u64, max: u64, cached: &impl Fn(u64) -> bool) -> u64 {
    let lowest = index.saturating_sub(max);
    match (lowest..index).rev().find(|i| !cached(*i)) {
        Some(miss) => index - 1 - miss,
        None if lowest == 0 && index <= max => index,
        None => max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 32;

    /// The window sequence of 4 KiB reads from the start of a file, each
    /// window read and its marker reached as `filemap_get_pages` does.
    fn sequential_windows(pages: u64) -> Vec<(u64, u64)> {
        let mut ra = RaState::default();
        let mut cached = vec![false; pages as usize + 64];
        let mut marked = vec![false; pages as usize + 64];
        let mut out = Vec::new();
        for index in 0..pages {
            let mut apply = |r: Option<RaRead>, cached: &mut Vec<bool>, marked: &mut Vec<bool>| {
                if let Some(r) = r {
                    let nr = r.nr.min(pages - r.start.min(pages));
                    for i in r.start..r.start + nr {
                        if !cached[i as usize] {
                            cached[i as usize] = true;
                            if r.lookahead > 0 && r.lookahead <= nr && i - r.start == nr - r.lookahead {
                                marked[i as usize] = true;
                            }
                        }
                    }
                    out.push((r.start, nr));
                }
            };
            if !cached[index as usize] {
                let c = cached.clone();
                let r = ondemand(&mut ra, MAX, index, 1, false, |i| c.get(i as usize) == Some(&true));
                apply(r, &mut cached, &mut marked);
            }
            if marked[index as usize] {
                marked[index as usize] = false;
                let c = cached.clone();
                let r = ondemand(&mut ra, MAX, index, 1, true, |i| c.get(i as usize) == Some(&true));
                apply(r, &mut cached, &mut marked);
            }
            ra.prev_pos = Some((index + 1) * crate::PAGE_BYTES);
        }
        out
    }

    #[test]
    fn sequential_reads_ramp_up_to_the_maximum_window() {
        // 4 pages (16 KiB), then 8, 16, and 32-page (128 KiB) windows.
        let w = sequential_windows(200);
        assert_eq!(&w[..5], &[(0, 4), (4, 8), (12, 16), (28, 32), (60, 32)]);
        let covered: u64 = w.iter().map(|(_, n)| n).sum();
        assert_eq!(covered, 200, "every page read once: {w:?}");
    }

    #[test]
    fn window_sizes_follow_the_kernel_formulas() {
        assert_eq!(
            (init_size(1, 32), init_size(2, 32), init_size(3, 32), init_size(8, 32), init_size(9, 32)),
            (4, 4, 8, 16, 32)
        );
        assert_eq!((next_size(1, 32), next_size(4, 32), next_size(16, 32), next_size(32, 32)), (4, 8, 32, 32));
    }

    #[test]
    fn a_random_read_reads_only_what_was_asked() {
        let mut ra = RaState { prev_pos: Some(10 * crate::PAGE_BYTES), ..RaState::default() };
        let r = ondemand(&mut ra, MAX, 500, 1, false, |_| false);
        assert_eq!(r, Some(RaRead { start: 500, nr: 1, lookahead: 0 }));
        assert_eq!(ra, RaState { prev_pos: Some(10 * crate::PAGE_BYTES), ..RaState::default() }, "state untouched");
    }

    #[test]
    fn a_read_after_cached_history_grows_a_context_window() {
        // Pages 495..500 cached (5 pages of history before 500).
        let mut ra = RaState { prev_pos: Some(10 * crate::PAGE_BYTES), ..RaState::default() };
        let r = ondemand(&mut ra, MAX, 500, 1, false, |i| (495..500).contains(&i)).unwrap();
        assert_eq!(r, RaRead { start: 500, nr: 6, lookahead: 1 });
        // One cached page is not enough history for a one-page read.
        let mut ra = RaState { prev_pos: Some(0), ..RaState::default() };
        let r = ondemand(&mut ra, MAX, 500, 1, false, |i| i == 499).unwrap();
        assert_eq!(r.nr, 1);
        assert_eq!(r.lookahead, 0);
    }

    #[test]
    fn a_read_right_after_the_previous_one_starts_a_window() {
        for prev_page in [41, 42] {
            let mut ra = RaState { prev_pos: Some(prev_page * crate::PAGE_BYTES), ..RaState::default() };
            let r = ondemand(&mut ra, MAX, 42, 1, false, |_| false).unwrap();
            assert_eq!(r, RaRead { start: 42, nr: 4, lookahead: 3 });
        }
    }

    #[test]
    fn history_counts_stop_at_the_first_gap_and_at_the_file_start() {
        let c = |i: u64| i >= 3;
        assert_eq!(count_history(10, 32, &c), 7);
        assert_eq!(count_history(10, 5, &c), 5);
        assert_eq!(count_history(6, 32, &|_| true), 6, "cached from page 0");
        assert_eq!(next_miss(5, 8, &|i| i < 9), 9);
        assert_eq!(next_miss(5, 8, &|_| true), 13);
    }
}
