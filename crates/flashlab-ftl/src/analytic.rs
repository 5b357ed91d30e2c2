//! Closed-form write amplification under uniform random single-page writes
//! (Desnoyers, "Analytic models of SSD write performance", ACM TOS 2014).

/// Principal branch W0 of the Lambert W function for x ≥ −1/e (Halley iteration).
pub fn lambert_w0(x: f64) -> f64 {
    assert!(x >= -1.0 / std::f64::consts::E - 1e-12, "lambert_w0 needs x >= -1/e, got {x}");
    let mut w = if x < -0.3 { -1.0 + (2.0 * (1.0 + std::f64::consts::E * x)).max(0.0).sqrt() } else { x.ln_1p() };
    for _ in 0..100 {
        let ew = w.exp();
        let f = w * ew - x;
        let step = f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
        if !step.is_finite() {
            break;
        }
        w -= step;
        if step.abs() < 1e-15 {
            break;
        }
    }
    w
}

/// WAF of FIFO (LRU) cleaning: A = α / (α + W0(−α·e^(−α))), α = 1 / (1 − spare factor).
pub fn fifo_waf(spare_factor: f64) -> f64 {
    fifo_waf_alpha(1.0 / (1.0 - spare_factor))
}

fn fifo_waf_alpha(alpha: f64) -> f64 {
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

/// WAF of greedy cleaning, Desnoyers' approximation A_FIFO(k·α) / k with
/// k = 1 + 1 / (2 · pages per block).
pub fn greedy_waf(spare_factor: f64, pages_per_block: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * pages_per_block as f64);
    fifo_waf_alpha(k / (1.0 - spare_factor)) / k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambert_w_known_points() {
        assert!((lambert_w0(0.0)).abs() < 1e-12);
        assert!((lambert_w0(std::f64::consts::E) - 1.0).abs() < 1e-12);
        assert!((lambert_w0(-1.0 / std::f64::consts::E) + 1.0).abs() < 1e-6);
        let w = lambert_w0(-0.2);
        assert!((w * w.exp() + 0.2).abs() < 1e-12);
    }

    #[test]
    fn waf_reference_values() {
        // Values computed independently (Python, same formulas).
        assert!((fifo_waf(0.1) - 5.178659).abs() < 1e-5);
        assert!((greedy_waf(0.1, 64) - 4.815857).abs() < 1e-5);
        assert!((fifo_waf(0.2) - 2.692731).abs() < 1e-5);
    }
}
