use flashlab_trace::Op;
use flashlab_workload::*;
use flashlab_workload::{Arrival, Pattern, SyntheticSettings};

fn settings(pattern: Pattern, requests: u64) -> SyntheticSettings {
    SyntheticSettings { pattern, requests, read_fraction: 0.0, trim_fraction: 0.0, pages_min: 1, pages_max: 1 }
}

fn pages(pattern: Pattern, n: u64, l: u64) -> Vec<u64> {
    Synthetic::new(settings(pattern, n), Arrival::Closed { queue_depth: 1 }, l, 4096, 9)
        .map(|r| r.offset_bytes / 4096)
        .collect()
}

#[test]
fn same_seed_same_requests_other_seed_differs() {
    let a: Vec<_> =
        Synthetic::new(settings(Pattern::Uniform, 1000), Arrival::Closed { queue_depth: 1 }, 5000, 4096, 1).collect();
    let b: Vec<_> =
        Synthetic::new(settings(Pattern::Uniform, 1000), Arrival::Closed { queue_depth: 1 }, 5000, 4096, 1).collect();
    let c: Vec<_> =
        Synthetic::new(settings(Pattern::Uniform, 1000), Arrival::Closed { queue_depth: 1 }, 5000, 4096, 2).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 1000);
}

#[test]
fn uniform_covers_space_evenly() {
    let p = pages(Pattern::Uniform, 100_000, 10);
    let mut counts = [0u32; 10];
    p.iter().for_each(|&x| counts[x as usize] += 1);
    assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
}

#[test]
fn hotcold_sends_traffic_share_to_space_share() {
    let p = pages(Pattern::HotCold { hot_fraction: 0.2, hot_traffic: 0.8 }, 100_000, 1000);
    let hot = p.iter().filter(|&&x| x < 200).count() as f64 / 1e5;
    assert!((hot - 0.8).abs() < 0.01, "hot share {hot}");
    assert!(p.iter().all(|&x| x < 1000));
}

#[test]
fn sequential_wraps() {
    assert_eq!(pages(Pattern::Sequential, 7, 3), vec![0, 1, 2, 0, 1, 2, 0]);
}

#[test]
fn zipf_rank_one_is_most_popular() {
    let p = pages(Pattern::Zipf { theta: 0.99 }, 100_000, 1000);
    let mut counts = vec![0u32; 1000];
    p.iter().for_each(|&x| counts[x as usize] += 1);
    assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[500]);
    // P(rank 1) = 1 / H(1000, 0.99) ≈ 0.133.
    assert!((counts[0] as f64 / 1e5 - 0.133).abs() < 0.01, "{}", counts[0]);
}

#[test]
fn mix_and_sizes() {
    let s = SyntheticSettings {
        read_fraction: 0.3,
        trim_fraction: 0.1,
        pages_min: 2,
        pages_max: 4,
        ..settings(Pattern::Uniform, 20_000)
    };
    let reqs: Vec<_> = Synthetic::new(s, Arrival::Closed { queue_depth: 1 }, 1000, 2048, 3).collect();
    let reads = reqs.iter().filter(|r| r.op == Op::Read).count() as f64 / 2e4;
    let trims = reqs.iter().filter(|r| r.op == Op::Trim).count() as f64 / 2e4;
    assert!((reads - 0.3).abs() < 0.015 && (trims - 0.1).abs() < 0.01);
    assert!(reqs.iter().all(|r| (2 * 2048..=4 * 2048).contains(&r.len_bytes) && r.offset_bytes % 2048 == 0));
    for n in 2..=4 {
        assert!(reqs.iter().any(|r| r.len_bytes == n * 2048));
    }
}

#[test]
fn open_loop_arrivals() {
    let fixed: Vec<u64> =
        Synthetic::new(settings(Pattern::Uniform, 4), Arrival::Fixed { interval_ns: 100 }, 10, 4096, 1)
            .map(|r| r.time_ns)
            .collect();
    assert_eq!(fixed, vec![0, 100, 200, 300]);
    let n = 100_000u64;
    let last = Synthetic::new(settings(Pattern::Uniform, n), Arrival::Poisson { mean_ns: 1000 }, 10, 4096, 1)
        .last()
        .unwrap()
        .time_ns;
    let mean = last as f64 / (n - 1) as f64;
    assert!((mean - 1000.0).abs() < 15.0, "mean inter-arrival {mean}");
}

#[test]
fn sub_seeds_are_distinct() {
    assert_ne!(sub_seed(1, "a"), sub_seed(1, "b"));
    assert_ne!(sub_seed(1, "a"), sub_seed(2, "a"));
    assert_eq!(sub_seed(5, "ftl"), sub_seed(5, "ftl"));
}

#[test]
fn next_single_page_is_next_without_the_request() {
    let patterns = [
        Pattern::Uniform,
        Pattern::Sequential,
        Pattern::HotCold { hot_fraction: 0.2, hot_traffic: 0.8 },
        Pattern::Zipf { theta: 0.9 },
    ];
    let arrivals =
        [Arrival::Closed { queue_depth: 4 }, Arrival::Fixed { interval_ns: 1000 }, Arrival::Poisson { mean_ns: 500 }];
    for pattern in patterns {
        for arrival in arrivals {
            let a = Synthetic::new(settings(pattern, 3000), arrival, 777, 4096, 5);
            let mut b = a.clone();
            assert!(b.single_page_writes());
            for r in a {
                assert_eq!((r.op, r.len_bytes), (Op::Write, 4096));
                assert_eq!(b.next_single_page(), Some((r.offset_bytes / 4096, r.time_ns)));
            }
            assert_eq!(b.next_single_page(), None);
        }
    }
    let mut s = settings(Pattern::Uniform, 1);
    s.read_fraction = 0.1;
    assert!(!Synthetic::new(s, Arrival::Closed { queue_depth: 1 }, 10, 4096, 1).single_page_writes());
}
