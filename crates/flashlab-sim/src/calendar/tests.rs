use super::*;

/// A seeded xorshift64 stream: `rnd(n)` is uniform enough in `0..n` for these tests.
fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

#[test]
fn books_earliest_gap_backfills_and_merges_dead_gaps() {
    let mut c = Calendar::new(1, true);
    assert_eq!(c.book(100, 10, 0, 0), 100);
    assert_eq!(c.book(100, 10, 0, 0), 110);
    assert_eq!(c.book(200, 10, 0, 0), 200);
    // The gap [120, 200) is back-filled by a transfer ready at 115.
    assert_eq!(c.book(115, 10, 0, 0), 120);
    // Ready at 50, before everything booked: it goes first.
    assert_eq!(c.book(50, 10, 0, 0), 50);
    // Leaves [135, 145) free: too short for a transfer, so merged.
    assert_eq!(c.book(145, 10, 0, 0), 145);
    let spans: Vec<(u64, u64)> = c.live().iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(spans, vec![(50, 60), (100, 130), (145, 155), (200, 210)]);
    assert_eq!(c.book(125, 10, 0, 0), 130);
    let spans: Vec<(u64, u64)> = c.live().iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(spans, vec![(50, 60), (100, 155), (200, 210)], "[130, 140) joined both neighbours");
    assert_eq!(c.idle_at(100, 0), 155);
    assert_eq!(c.idle_at(60, 0), 60);
    c.prune(125);
    assert_eq!(c.live().len(), 2, "[100, 155) still ends after the floor");
    assert_eq!(c.book(125, 10, 0, 0), 155);
}

#[test]
fn ignored_slots_are_free_and_can_be_taken_out() {
    let mut c = Calendar::new(1, true);
    c.book(100, 10, 3, 0);
    c.book(110, 10, 0, 0);
    let (at, _, _) = c.earliest(95, 10, 0, |s| s.owner == 3);
    assert_eq!(at, 95, "ignoring the GC slot at 100, the host slot fits before 110");
    let mut out = Vec::new();
    c.take_overlapping(95, 105, 0, &mut out);
    assert_eq!(out, vec![Slot { start: 100, end: 110, owner: 3 }]);
    assert_eq!(c.book(95, 10, 0, 0), 95);
    assert_eq!(c.book(100, 10, 3, 0), 120);
}

#[test]
fn a_pair_books_like_two_single_bookings() {
    let mut rnd = xorshift(0x2545_f491_4f6c_dd1du64);
    let (mut a, mut b) = (Calendar::new(2, false), Calendar::new(2, false));
    for n in 0..3000 {
        let (ready, who) = (rnd(30_000), n % 2);
        if rnd(2) == 0 {
            assert_eq!(a.book(ready, 7, 0, who), b.book(ready, 7, 0, who));
        } else {
            let first = b.book(ready, 7, 0, who);
            let pair = (first, b.book(first + 7, 7, 0, who));
            assert_eq!(a.book_pair(ready, 7, who), pair);
        }
    }
    assert_eq!(a.live(), b.live());
}

/// GC runs as `Timeline::book_migration_run` books them: per die a run of pairs,
/// each ready a fixed time after the previous pair's second transfer ends (shorter
/// or longer than a transfer, so appended pairs both merge with the last slot and
/// open new ones), runs of different dies interleaved and often landing behind
/// everything booked ([`Calendar::append_pair`], and where the rest of the run can be
/// one periodic node, [`Calendar::append_run`]) or in the gap behind their die's last
/// slot, single bookings and pruning in between: booked by pairs and periodic runs and
/// by single bookings, every start, every slot and `idle_at` everywhere agree.
///
/// Twice: with gaps of several lengths, then mostly of one for which a second die's
/// run fills a periodic node's gaps at one phase, merging with both neighbours
/// ([`Calendar::fill_run`]: period 45, slots 20, 5 left per gap).
#[test]
fn runs_of_pairs_book_like_single_bookings() {
    runs_book_like_single_bookings(0x9e37_79b9_7f4a_7c15, [3, 9, 10, 25, 40], 0);
    runs_book_like_single_bookings(0x2545_f491_4f6c_dd1d, [25, 25, 25, 25, 40], 100);
}

fn runs_book_like_single_bookings(seed: u64, gap_lengths: [u64; 5], min_phase: u64) {
    let mut rnd = xorshift(seed);
    let (dies, len) = (4, 10);
    let (mut a, mut b) = (Calendar::new(dies, false), Calendar::new(dies, false));
    let (mut free, mut gaps) = (vec![0u64; dies], vec![10u64; dies]);
    let (mut appended, mut filled, mut periodic, mut phase) = (0, 0, 0, 0);
    for _ in 0..5000 {
        let who = rnd(dies as u64) as usize;
        if rnd(4) == 0 {
            let ready = free[who] + rnd(100);
            assert_eq!(a.book(ready, len, 0, who), b.book(ready, len, 0, who));
            continue;
        }
        // Sometimes the die's next run continues its last one at the same period.
        let (gap, mut ready) = match rnd(4) {
            0 => (gaps[who], free[who] + gaps[who]),
            _ => (gap_lengths[rnd(5) as usize], free[who] + rnd(60)),
        };
        gaps[who] = gap;
        let mut left = 1 + rnd(12);
        while left > 0 {
            if a.cursor[who] != NIL {
                let n = *a.node(a.cursor[who]);
                let behind = n.end <= ready && ready + 2 * len <= n.next_start;
                appended += (behind && n.next == NIL) as u32;
                filled += (behind && n.next != NIL) as u32;
            }
            if left >= 2 && a.is_last(who) && a.append_run(who, ready, left, 2 * len + gap, len) {
                for _ in 0..left {
                    let first = b.book(ready, len, 0, who);
                    assert_eq!((first, b.book(first + len, len, 0, who)), (ready, ready + len));
                    free[who] = ready + 2 * len;
                    ready = free[who] + gap;
                }
                periodic += left;
                break;
            }
            let slots = a.fill_slots(who, ready, 2 * len + gap, len, 0, 2 * len + gap);
            if left >= 2 && slots >= 2 {
                // Another die's periodic node filled at one phase (`calendar::fill`).
                let m = left.min(slots);
                a.fill_run(who, ready, m, 2 * len + gap);
                for _ in 0..m {
                    let first = b.book(ready, len, 0, who);
                    assert_eq!((first, b.book(first + len, len, 0, who)), (ready, ready + len));
                    free[who] = ready + 2 * len;
                    ready = free[who] + gap;
                }
                (phase, left) = (phase + m, left - m);
                continue;
            }
            let first = b.book(ready, len, 0, who);
            let pair = (first, b.book(first + len, len, 0, who));
            assert_eq!(a.book_pair(ready, len, who), pair);
            free[who] = pair.1 + len;
            ready = free[who] + gap;
            left -= 1;
        }
        assert_eq!(a.live(), b.live());
        let mut floor = *free.iter().min().unwrap();
        if rnd(4) == 0 {
            // Time passes: no die is ready before an instant inside the booked stretch.
            let live = a.live();
            let (first, last) = (live[0].start, live[live.len() - 1].end);
            floor = floor.max(first + rnd(last - first));
            free.iter_mut().for_each(|f| *f = (*f).max(floor));
        }
        for _ in 0..4 {
            let (t, d) = (floor + rnd(400), rnd(dies as u64) as usize);
            assert_eq!(a.idle_at(t, d), b.idle_at(t, d), "idle_at({t}) for die {d}");
        }
        a.prune(floor);
        b.prune(floor);
    }
    assert!(appended > 600, "only {appended} pairs appended behind everything");
    assert!(filled > 300, "only {filled} pairs fitted in the gap after their die's slot");
    assert!(periodic > 1000, "only {periodic} pairs booked in periodic runs");
    assert!(phase >= min_phase, "only {phase} pairs filled periodic nodes at one phase");
    assert!(a.len() < b.len(), "periodic nodes hold several slots");
}

/// A periodic node pruned slot by slot, split by a booking in one of its gaps, merged
/// with at both ends, and asked when the bus is idle.
#[test]
fn a_periodic_node_is_pruned_split_and_merged_like_its_slots() {
    let (mut a, mut b) = (Calendar::new(2, false), Calendar::new(2, false));
    assert_eq!(a.book(0, 10, 0, 0), b.book(0, 10, 0, 0));
    // Slots [100, 120), [150, 170), … [400, 420): period 50, width 20.
    assert!(a.is_last(0) && a.append_run(0, 100, 7, 50, 10));
    for k in 0..7 {
        assert_eq!(b.book_pair(100 + 50 * k, 10, 0), (100 + 50 * k, 110 + 50 * k));
    }
    assert_eq!(a.live(), b.live());
    assert_eq!(a.len(), 2);
    for t in [0, 5, 10, 99, 100, 110, 119, 120, 121, 149, 150, 169, 399, 405, 420, 500] {
        assert_eq!(a.idle_at(t, 1), b.idle_at(t, 1), "idle_at({t})");
        assert_eq!(a.idle_at(t, 0), b.idle_at(t, 0), "idle_at({t})");
    }
    // Pruned inside the run: its first slots go, the die's cursor stays on the rest.
    a.prune(175);
    b.prune(175);
    assert_eq!(a.live(), b.live());
    assert_eq!(a.head_start, 200);
    // Die 1 books in the gap [270, 300): the node splits; a gap of 8 to the slot
    // before, 2 after: the booking merges with both.
    assert_eq!(a.book(278, 10, 0, 1), b.book(278, 10, 0, 1));
    assert_eq!(a.book(283, 10, 0, 1), b.book(283, 10, 0, 1));
    assert_eq!(a.live(), b.live());
    // Ready inside a slot: the next gap.
    assert_eq!(a.book(352, 10, 0, 1), b.book(352, 10, 0, 1));
    assert_eq!(a.live(), b.live());
    // The run continued at its period, then pruned to one slot.
    assert_eq!(a.book_pair(450, 10, 0), b.book_pair(450, 10, 0));
    assert_eq!(a.live(), b.live());
    a.prune(460);
    b.prune(460);
    assert_eq!(a.live(), b.live());
    assert_eq!(a.cursor[1], NIL, "die 1's last transfer was pruned");
    for t in 460..480 {
        assert_eq!(a.idle_at(t, 0), b.idle_at(t, 0), "idle_at({t})");
        assert_eq!(a.book(t, 10, 0, t as usize % 2), b.book(t, 10, 0, t as usize % 2));
    }
    assert_eq!(a.live(), b.live());
}

/// Model check against a brute-force oracle: random bookings of one length never
/// overlap, each starts at the earliest instant >= ready at which it fits. With
/// two dies, and with five (searches then often start from another die's cursor).
/// Among them GC-like runs of pairs, whose pairs behind everything are booked as one
/// periodic node ([`Calendar::append_run`]) that later bookings split; the free gaps
/// (at least one transfer long) after the floor are compared with the oracle's.
#[test]
fn matches_a_brute_force_oracle() {
    for dies in [2, 5] {
        matches_the_oracle(dies);
    }
}

/// Free stretches of at least `len` that start after `floor`, ending before `end`.
fn oracle_gaps(busy: &[bool], floor: u64, end: u64, len: u64) -> Vec<(u64, u64)> {
    let mut gaps = Vec::new();
    let mut t = floor + 1;
    while t < end {
        if busy[t as usize] || !busy[t as usize - 1] {
            t += 1;
            continue;
        }
        let stop = (t..end).find(|&u| busy[u as usize]).unwrap_or(end);
        if stop < end && stop - t >= len {
            gaps.push((t, stop));
        }
        t = stop;
    }
    gaps
}

/// The calendar's gaps between slots that start after `floor`.
fn calendar_gaps(c: &Calendar, floor: u64) -> Vec<(u64, u64)> {
    let live = c.live();
    let gaps = live.windows(2).map(|w| (w[0].end, w[1].start)).filter(|g| g.0 != g.1);
    gaps.filter(|g| g.0 > floor).collect()
}

fn matches_the_oracle(dies: usize) {
    let mut rnd = xorshift(0x1234_5678_9abc_def0u64);
    let mut c = Calendar::new(dies, false);
    let mut busy = vec![false; 400_000];
    let (mut floor, mut most, mut periodic, mut phase) = (0, 0, 0, 0);
    let len = 7;
    let earliest = |busy: &mut [bool], ready: u64| {
        let want = (ready..).find(|&s| (s..s + len).all(|t| !busy[t as usize])).unwrap();
        (want..want + len).for_each(|t| busy[t as usize] = true);
        want
    };
    for n in 0..8000 {
        // Bookings are never ready before the floor.
        let ready = floor + rnd(15_000);
        let who = n % dies;
        match rnd(12) {
            0 => {
                // A run of pairs on one die, each ready `gap` after the previous ends.
                let gap = [3, 7, 20, 30][rnd(4) as usize];
                let (mut ready, mut left) = (ready, 2 + rnd(30));
                while left > 0 {
                    if left >= 2 && c.is_last(who) && c.append_run(who, ready, left, 2 * len + gap, len) {
                        for _ in 0..left {
                            assert_eq!(earliest(&mut busy, ready), ready);
                            assert_eq!(earliest(&mut busy, ready + len), ready + len);
                            ready += 2 * len + gap;
                        }
                        periodic += left;
                        break;
                    }
                    let slots = c.fill_slots(who, ready, 2 * len + gap, len, 0, 2 * len + gap);
                    if left >= 2 && slots >= 2 {
                        let m = left.min(slots);
                        c.fill_run(who, ready, m, 2 * len + gap);
                        for _ in 0..m {
                            assert_eq!(earliest(&mut busy, ready), ready);
                            assert_eq!(earliest(&mut busy, ready + len), ready + len);
                            ready += 2 * len + gap;
                        }
                        (phase, left) = (phase + m, left - m);
                        continue;
                    }
                    let first = earliest(&mut busy, ready);
                    let pair = (first, earliest(&mut busy, first + len));
                    assert_eq!(c.book_pair(ready, len, who), pair);
                    ready = pair.1 + len + gap;
                    left -= 1;
                }
            }
            1..=4 => {
                // A pair: the second transfer ready when the first ends.
                let first = earliest(&mut busy, ready);
                let pair = (first, earliest(&mut busy, first + len));
                assert_eq!(c.book_pair(ready, len, who), pair);
            }
            _ => assert_eq!(c.book(ready, len, 0, who), earliest(&mut busy, ready)),
        }
        if n % 500 == 499 {
            floor += rnd(3000);
            c.prune(floor);
        }
        if n % 100 == 0 {
            let end = c.live().last().map_or(0, |s| s.end);
            assert_eq!(calendar_gaps(&c, floor), oracle_gaps(&busy, floor, end, len), "after booking {n}");
        }
        most = most.max(c.len());
    }
    assert!(periodic > 500, "only {periodic} pairs booked in periodic runs");
    assert!(phase > 100, "only {phase} pairs filled periodic nodes at one phase");
    // Freed nodes are reused: the arena holds no more nodes than were ever live at once.
    assert!(c.nodes.len() <= most + 1, "{} nodes, {most} live", c.nodes.len());
}
