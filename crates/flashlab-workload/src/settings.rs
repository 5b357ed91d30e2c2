//! Settings of the synthetic workload generators, validated (built by flashlab-config).

/// Spatial pattern of synthetic requests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    Uniform,
    /// `hot_fraction` of the space receives `hot_traffic` of the requests.
    HotCold {
        hot_fraction: f64,
        hot_traffic: f64,
    },
    Sequential,
    Zipf {
        theta: f64,
    },
}

/// When requests are issued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// A new request as soon as one of `queue_depth` outstanding completes.
    Closed { queue_depth: u32 },
    /// Open loop, constant inter-arrival time.
    Fixed { interval_ns: u64 },
    /// Open loop, exponential inter-arrival times.
    Poisson { mean_ns: u64 },
    /// Open loop at the trace's timestamps × scale.
    Trace { time_scale: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticSettings {
    pub pattern: Pattern,
    pub requests: u64,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    /// Request size range in pages (inclusive).
    pub pages_min: u64,
    pub pages_max: u64,
}
