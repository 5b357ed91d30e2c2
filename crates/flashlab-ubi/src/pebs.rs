//! PEB states and erase counters, with the two orderings wear levelling
//! asks for on every erase (as Linux UBI's free and used RB-trees): free
//! PEBs and used (non-fastmap) PEBs, each sorted by (erase counter, PEB).
//! Every change goes through [`PebTable::set`] or [`PebTable::set_ec`], so
//! picking the lowest- or highest-worn PEB costs O(log n), not a scan.

use crate::ubi::{Peb, FASTMAP_VOL};
use std::collections::BTreeSet;
use std::ops::Index;

#[derive(Debug, Clone)]
pub(crate) struct PebTable {
    state: Vec<Peb>,
    ec: Vec<u64>,
    free: BTreeSet<(u64, u32)>,
    used: BTreeSet<(u64, u32)>,
}

fn is_used(s: Peb) -> bool {
    matches!(s, Peb::Used { vol, .. } if vol != FASTMAP_VOL)
}

impl PebTable {
    /// `n` free PEBs with erase counter 0.
    pub fn new(n: usize) -> PebTable {
        let free = (0..n as u32).map(|p| (0, p)).collect();
        PebTable { state: vec![Peb::Free; n], ec: vec![0; n], free, used: BTreeSet::new() }
    }

    pub fn len(&self) -> usize {
        self.state.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Peb> {
        self.state.iter()
    }

    pub fn ec(&self, p: usize) -> u64 {
        self.ec[p]
    }

    fn drop_key(&mut self, p: u32) {
        let k = (self.ec[p as usize], p);
        match self.state[p as usize] {
            Peb::Free => self.free.remove(&k),
            s if is_used(s) => self.used.remove(&k),
            _ => false,
        };
    }

    fn add_key(&mut self, p: u32) {
        let k = (self.ec[p as usize], p);
        match self.state[p as usize] {
            Peb::Free => self.free.insert(k),
            s if is_used(s) => self.used.insert(k),
            _ => false,
        };
    }

    /// Sets PEB `p`'s state.
    pub fn set(&mut self, p: u32, s: Peb) {
        self.drop_key(p);
        self.state[p as usize] = s;
        self.add_key(p);
    }

    /// Sets PEB `p`'s erase counter.
    pub fn set_ec(&mut self, p: u32, ec: u64) {
        self.drop_key(p);
        self.ec[p as usize] = ec;
        self.add_key(p);
    }

    /// Changes every PEB's state (`f(peb, state)`).
    pub fn update_all(&mut self, mut f: impl FnMut(u32, &mut Peb)) {
        for p in 0..self.state.len() as u32 {
            let mut s = self.state[p as usize];
            f(p, &mut s);
            if s != self.state[p as usize] {
                self.set(p, s);
            }
        }
    }

    /// The free PEB with the lowest (erase counter, number).
    pub fn lowest_free(&self) -> Option<u32> {
        self.free.first().map(|(_, p)| *p)
    }

    /// The free PEB with the highest (erase counter, number).
    pub fn highest_free(&self) -> Option<u32> {
        self.free.last().map(|(_, p)| *p)
    }

    /// The used PEB with the lowest (erase counter, number) that `skip`
    /// does not exclude.
    pub fn coldest_used(&self, skip: impl Fn(u32) -> bool) -> Option<u32> {
        self.used.iter().map(|(_, p)| *p).find(|p| !skip(*p))
    }

    /// Host bytes of the table.
    pub fn memory_bytes(&self) -> usize {
        self.state.len() * (std::mem::size_of::<Peb>() + 8) + (self.free.len() + self.used.len()) * 24
    }

    /// The orderings against a rebuild (consistency checks).
    pub fn check(&self) -> Result<(), String> {
        let mut fresh = PebTable::new(0);
        fresh.state.clone_from(&self.state);
        fresh.ec.clone_from(&self.ec);
        for p in 0..self.state.len() as u32 {
            fresh.add_key(p);
        }
        if fresh.free != self.free || fresh.used != self.used {
            return Err("PEB orderings by erase counter disagree with the PEB states".into());
        }
        Ok(())
    }
}

impl Index<usize> for PebTable {
    type Output = Peb;

    fn index(&self, p: usize) -> &Peb {
        &self.state[p]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orderings_follow_states_and_counters() {
        let mut t = PebTable::new(4);
        t.set_ec(0, 5);
        t.set_ec(2, 1);
        assert_eq!((t.lowest_free(), t.highest_free()), (Some(1), Some(0)));
        t.set(1, Peb::Used { vol: 0, lnum: 0, sqnum: 1 });
        t.set(3, Peb::Used { vol: FASTMAP_VOL, lnum: 0, sqnum: 2 });
        assert_eq!(t.lowest_free(), Some(2));
        assert_eq!(t.coldest_used(|_| false), Some(1));
        assert_eq!(t.coldest_used(|p| p == 1), None, "fastmap PEBs are not levelled");
        t.update_all(|_, s| {
            if matches!(s, Peb::Used { .. }) {
                *s = Peb::Pending
            }
        });
        assert_eq!(t.coldest_used(|_| false), None);
        t.check().unwrap();
    }
}
