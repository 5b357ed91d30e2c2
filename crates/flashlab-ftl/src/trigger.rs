//! When GC runs. `Threshold`: a plane below `free_blocks_min` free blocks collects
//! (urgent). `DtGc` (Qin et al. 2014, as used by seed 001): two dynamic thresholds per
//! plane, checked every `check_pages` host pages written to the plane:
//! H = a·E + b·(1 − Vp) and T = A·E + B·(1 − Vp) + c·Ip, with FP, Vp and Ip the plane's
//! free-, valid- and invalid-page ratios and E the over-provisioning ratio. FP < H: an
//! urgent (non-interruptible) GC request; H ≤ FP < T: an interruptible one (run in idle
//! time by preemptible GC); FP ≥ T: none. `free_blocks_min` stays a hard floor.
//! `FreeRatio` (SSDsim, Hu et al. 2011, `pagemap.c` `get_ppn`): after each host page
//! programmed to a plane, if the plane's free pages fall below `min` × its pages
//! (`gc hard threshold`, 0.10 in SSDsim's shipped `page.parameters`), one
//! non-interruptible GC run collects one victim in that plane.

/// DT-GC's coefficients (seed 001: a 0.3, b 0.1, A 0.5, B 0.3, c 0.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DtParams {
    pub a: f64,
    pub b: f64,
    pub big_a: f64,
    pub big_b: f64,
    pub c: f64,
    /// Over-provisioning ratio E.
    pub e: f64,
    /// Host pages written to a plane between two checks.
    pub check_pages: u32,
}

impl DtParams {
    /// The seed's coefficients with over-provisioning `e`.
    pub fn seed001(e: f64) -> Self {
        DtParams { a: 0.3, b: 0.1, big_a: 0.5, big_b: 0.3, c: 0.2, e, check_pages: 64 }
    }

    /// (H, T) for valid-page ratio `vp` and invalid-page ratio `ip`.
    pub fn thresholds(&self, vp: f64, ip: f64) -> (f64, f64) {
        let h = self.a * self.e + self.b * (1.0 - vp);
        let t = self.big_a * self.e + self.big_b * (1.0 - vp) + self.c * ip;
        (h, t)
    }

    /// What a plane with these page ratios asks of GC.
    pub fn request(&self, fp: f64, vp: f64, ip: f64) -> GcRequest {
        let (h, t) = self.thresholds(vp, ip);
        if fp < h {
            GcRequest::Urgent
        } else if fp < t {
            GcRequest::Interruptible
        } else {
            GcRequest::None
        }
    }
}

/// The GC trigger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    Threshold,
    DtGc(DtParams),
    /// SSDsim's hard threshold on a plane's free-page ratio.
    FreeRatio {
        min: f64,
    },
}

impl Trigger {
    /// SSDsim's shipped `gc hard threshold` (page.parameters: 0.10).
    pub const SSDSIM_FREE_RATIO: f64 = 0.10;
}

/// What a plane's state asks of GC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcRequest {
    None,
    Interruptible,
    Urgent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_thresholds() {
        let p = DtParams::seed001(0.1);
        let (h, t) = p.thresholds(0.8, 0.1);
        assert!((h - (0.03 + 0.02)).abs() < 1e-12);
        assert!((t - (0.05 + 0.06 + 0.02)).abs() < 1e-12);
        assert_eq!(p.request(0.04, 0.8, 0.1), GcRequest::Urgent);
        assert_eq!(p.request(0.05, 0.8, 0.1), GcRequest::Interruptible);
        assert_eq!(p.request(0.13, 0.8, 0.1), GcRequest::None);
        // H is largest (a·E + b) on an empty plane and falls as valid pages grow.
        assert!((p.thresholds(0.0, 0.0).0 - 0.13).abs() < 1e-12);
        assert!(p.thresholds(0.9, 0.0).0 < p.thresholds(0.5, 0.0).0);
    }
}
