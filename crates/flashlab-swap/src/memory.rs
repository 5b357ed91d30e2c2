//! RAM: page frames, the CLOCK replacement, and the per-page state of the
//! application's anonymous memory (resident frame, swap slot, dirty).
//!
//! Replacement is CLOCK (second chance): a hand sweeps the frames; a referenced frame
//! loses its reference bit and is passed over, an unreferenced one is evicted. It
//! approximates LRU as Linux's active/inactive lists do (`shrink_active_list` clears
//! the referenced bit, `shrink_page_list` evicts pages found unreferenced); the kernel's
//! two lists and its file-backed pages are not modelled.
//!
//! Swap cache (mm/swap_state.c): a page read back from swap keeps its slot while it
//! stays clean, so evicting it again needs no write; a write to it makes the swap copy
//! stale and frees the slot (`do_wp_page` → `reuse_swap_page` / `try_to_free_swap`).

/// No frame / no slot / no page.
pub const NONE: u32 = u32::MAX;

/// Frames and the per-page state.
#[derive(Clone, Debug)]
pub struct Memory {
    pub frame_page: Vec<u32>,
    referenced: Vec<u64>,
    hand: u32,
    free: Vec<u32>,
    pub frame_of: Vec<u32>,
    pub slot_of: Vec<u32>,
    dirty: Vec<u64>,
}

#[inline]
fn get(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] >> (i % 64) & 1 == 1
}

#[inline]
fn set(bits: &mut [u64], i: u32, on: bool) {
    let (w, b) = (i as usize / 64, i % 64);
    bits[w] = (bits[w] & !(1 << b)) | ((on as u64) << b);
}

impl Memory {
    pub fn new(frames: u32, pages: u32) -> Memory {
        Memory {
            frame_page: vec![NONE; frames as usize],
            referenced: vec![0; (frames as usize).div_ceil(64)],
            hand: 0,
            free: (0..frames).rev().collect(),
            frame_of: vec![NONE; pages as usize],
            slot_of: vec![NONE; pages as usize],
            dirty: vec![0; (pages as usize).div_ceil(64)],
        }
    }

    pub fn frames(&self) -> u32 {
        self.frame_page.len() as u32
    }

    #[inline]
    pub fn resident(&self, page: u32) -> bool {
        self.frame_of[page as usize] != NONE
    }

    #[inline]
    pub fn dirty(&self, page: u32) -> bool {
        get(&self.dirty, page)
    }

    #[inline]
    pub fn set_dirty(&mut self, page: u32, on: bool) {
        set(&mut self.dirty, page, on)
    }

    #[inline]
    pub fn touch(&mut self, page: u32) {
        set(&mut self.referenced, self.frame_of[page as usize], true);
    }

    /// A free frame, if any.
    #[inline]
    pub fn free_frame(&mut self) -> Option<u32> {
        self.free.pop()
    }

    pub fn free_frames(&self) -> usize {
        self.free.len()
    }

    /// Put `page` into free frame `frame`, unreferenced.
    #[inline]
    pub fn map(&mut self, page: u32, frame: u32) {
        self.frame_page[frame as usize] = page;
        self.frame_of[page as usize] = frame;
        set(&mut self.referenced, frame, false);
    }

    /// The next victim of the CLOCK hand: the first unreferenced occupied frame,
    /// clearing reference bits on the way. Returns its page, still mapped.
    pub fn victim(&mut self) -> Option<u32> {
        let n = self.frames();
        for _ in 0..2 * n + 1 {
            let f = self.hand;
            self.hand = if f + 1 == n { 0 } else { f + 1 };
            let p = self.frame_page[f as usize];
            if p == NONE {
                continue;
            }
            if get(&self.referenced, f) {
                set(&mut self.referenced, f, false);
            } else {
                return Some(p);
            }
        }
        None
    }

    /// Take `page` out of its frame, freeing the frame.
    #[inline]
    pub fn unmap(&mut self, page: u32) {
        let f = self.frame_of[page as usize];
        self.frame_page[f as usize] = NONE;
        self.frame_of[page as usize] = NONE;
        self.free.push(f);
    }
}
