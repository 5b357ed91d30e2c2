//! Comparisons behind a reproduction's claim verdicts, shared by the
//! f2fs-ext4-ftl and fs-compare reports.

/// A comparison counted toward a verdict: its text and whether it held.
#[derive(Debug, Clone)]
pub struct Check {
    pub text: String,
    pub held: bool,
}

/// "reproduced" when every comparison holds, "not reproduced" when none does,
/// "partly" otherwise, with the count; `checks` must not be empty.
pub fn tally(checks: &[Check]) -> String {
    let held = checks.iter().filter(|c| c.held).count();
    let v = match held {
        h if h == checks.len() => "reproduced",
        0 => "not reproduced",
        _ => "partly",
    };
    format!("{v} ({held}/{} comparisons)", checks.len())
}

/// The comparisons joined by "; ", a failed one marked ✗; "–" when there are none.
pub fn measured(checks: &[Check]) -> String {
    if checks.is_empty() {
        return "–".into();
    }
    checks.iter().map(|c| format!("{}{}", c.text, if c.held { "" } else { " ✗" })).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(held: bool) -> Check {
        Check { text: format!("x{held}"), held }
    }

    #[test]
    fn tally_and_measured() {
        assert_eq!(tally(&[c(true), c(true)]), "reproduced (2/2 comparisons)");
        assert_eq!(tally(&[c(false)]), "not reproduced (0/1 comparisons)");
        assert_eq!(tally(&[c(true), c(false)]), "partly (1/2 comparisons)");
        assert_eq!(measured(&[c(true), c(false)]), "xtrue; xfalse ✗");
        assert_eq!(measured(&[]), "–");
    }
}
