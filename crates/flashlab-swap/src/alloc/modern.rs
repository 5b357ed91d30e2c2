//! `linux-modern`: the SSD path of current kernels (Linux 3.12 to 6.9, mm/swapfile.c):
//! `swapon --discard` discards the whole area once (`discard_swap`), slots are handed
//! out cluster by cluster from a list of wholly free, 256-aligned clusters
//! (`scan_swap_map_try_ssd_cluster` over `si->free_clusters`), and a cluster whose last
//! slot is freed is discarded then put at the tail of the free list
//! (`dec_cluster_info_page` → `free_cluster` → `swap_cluster_schedule_discard`, sent by
//! the `swap_do_scheduled_discard` work item: the freeing task does not wait). With no
//! free cluster left, the first free slot from `cluster_next` (the old `checks:` scan).
//!
//! Differences: one allocating task (no per-CPU clusters); the current cluster is not
//! discarded when it becomes free while still being allocated from (it is reused
//! straight away).

use super::scan::first_free_from;
use crate::area::{Discard, SwapArea, CLUSTER};

const NIL: u32 = u32::MAX;

/// A doubly linked list of cluster indices in flat arrays (`struct swap_cluster_list`).
#[derive(Clone, Debug)]
struct ClusterList {
    head: u32,
    tail: u32,
    next: Vec<u32>,
    prev: Vec<u32>,
    on: Vec<bool>,
}

impl ClusterList {
    fn new(n: u32) -> Self {
        ClusterList {
            head: NIL,
            tail: NIL,
            next: vec![NIL; n as usize],
            prev: vec![NIL; n as usize],
            on: vec![false; n as usize],
        }
    }

    fn push_back(&mut self, c: u32) {
        debug_assert!(!self.on[c as usize]);
        self.on[c as usize] = true;
        self.prev[c as usize] = self.tail;
        self.next[c as usize] = NIL;
        match self.tail {
            NIL => self.head = c,
            t => self.next[t as usize] = c,
        }
        self.tail = c;
    }

    fn remove(&mut self, c: u32) {
        if !self.on[c as usize] {
            return;
        }
        self.on[c as usize] = false;
        let (p, n) = (self.prev[c as usize], self.next[c as usize]);
        match p {
            NIL => self.head = n,
            p => self.next[p as usize] = n,
        }
        match n {
            NIL => self.tail = p,
            n => self.prev[n as usize] = p,
        }
    }

    fn pop_front(&mut self) -> Option<u32> {
        let h = self.head;
        (h != NIL).then(|| {
            self.remove(h);
            h
        })
    }
}

#[derive(Clone, Debug)]
pub struct ModernAlloc {
    free: ClusterList,
    /// The cluster allocated from and the next slot to try (`percpu_cluster`).
    cur: Option<(u32, u32)>,
}

impl ModernAlloc {
    /// Every wholly free cluster on the free list, in address order (`setup_clusters`).
    pub fn new(a: &SwapArea) -> Self {
        let mut free = ClusterList::new(a.clusters());
        (0..a.clusters()).filter(|&c| a.cluster_free(c)).for_each(|c| free.push_back(c));
        ModernAlloc { free, cur: None }
    }

    /// `get_swap_page` → `scan_swap_map_try_ssd_cluster`, else the first-free scan.
    pub fn get(&mut self, a: &mut SwapArea) -> Option<(u32, Option<Discard>)> {
        loop {
            if let Some((c, next)) = self.cur {
                let end = (c + 1) * CLUSTER;
                if let Some(s) = (next..end).find(|&s| a.is_free(s)) {
                    a.take(s);
                    self.cur = Some((c, s + 1));
                    return Some((s, None));
                }
                self.cur = None;
            }
            match self.free.pop_front() {
                Some(c) => self.cur = Some((c, c * CLUSTER)),
                None => break,
            }
        }
        let s = first_free_from(a, a.cluster_next)?;
        self.free.remove(s / CLUSTER);
        a.take(s);
        Some((s, None))
    }

    /// After `swap_entry_free` of `slot`: a cluster now wholly free (and not the one
    /// being allocated from) is discarded, when the device accepts discards, and put
    /// at the tail of the free list.
    pub fn freed(&mut self, a: &mut SwapArea, slot: u32, discardable: bool) -> Option<Discard> {
        let c = slot / CLUSTER;
        if !a.cluster_free(c) || self.cur.is_some_and(|(cur, _)| cur == c) {
            return None;
        }
        self.free.push_back(c);
        if !discardable {
            return None;
        }
        let d = Discard { start: c * CLUSTER, len: CLUSTER };
        a.mark_discarded(d);
        Some(d)
    }
}
