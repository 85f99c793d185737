//! One grammar for flag values: durations (`500ms`, `3s`, `1m30s`, bare numbers are seconds)
//! and byte sizes (`64KiB`, `16MiB`, `unlimited`). Every flag of every command parses through
//! here, so `--timeout` means the same thing everywhere and absurd values are refused with a
//! message instead of overflowing.

use std::time::Duration;

/// The longest duration any flag accepts (a year): beyond it a deadline means nothing, and
/// adding it to a clock instant could overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a duration: one or more `<number><unit>` parts (`ms`, `s`, `m`, `h`), or a bare
/// number of seconds (fractions allowed: `0.5`).
pub fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration; expected e.g. 500ms, 3s, 1m30s".into());
    }
    let too_long = || format!("{t}: longer than the maximum of one year (8760h)");
    if let Ok(secs) = t.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return Err(format!(
                "{t}: not a duration; expected e.g. 500ms, 3s, 1m30s"
            ));
        }
        return Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| *d <= MAX_DURATION)
            .ok_or_else(too_long);
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{t}: a number needs a unit (ms, s, m, h)"))?;
        let (num, tail) = rest.split_at(num_end);
        let unit_end = tail
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let n: f64 = num
            .parse()
            .map_err(|_| format!("{t}: not a duration; expected e.g. 500ms, 3s, 1m30s"))?;
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "" => return Err(format!("{t}: a number needs a unit (ms, s, m, h)")),
            other => return Err(format!("{t}: unknown unit {other:?}; use ms, s, m or h")),
        };
        total += n * scale;
        rest = tail;
    }
    if total > MAX_DURATION.as_secs_f64() {
        return Err(too_long());
    }
    Duration::try_from_secs_f64(total).map_err(|_| too_long())
}

/// A byte size or count limit; `unlimited` is the largest value.
pub fn size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("none") {
        return Ok(u64::MAX);
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{t:?}: expected a size such as 65536, 64KiB, 16MiB or unlimited"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" | "k" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "KB" | "kB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "{t:?}: unknown unit {other:?}; use B, KiB, MiB, GiB (or KB, MB, GB)"
            ));
        }
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("{t:?}: too large; use `unlimited`"))
}

/// Shows a size the way [`size`] reads it (the `--help` defaults are written so).
pub fn show_size(n: u64) -> String {
    match n {
        u64::MAX => "unlimited".into(),
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{}GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}KiB", n >> 10),
        n => n.to_string(),
    }
}

/// A count such as `--max-events`: a plain number or `unlimited`.
pub fn count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") {
        return Ok(u64::MAX);
    }
    t.parse()
        .map_err(|_| format!("{t:?}: expected a whole number or unlimited"))
}

/// A count that must be at least 1 (`--concurrency`, `--requests`).
pub fn positive(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?}: expected a whole number of at least 1")),
    }
}

/// A share between 0 and 1 (`--max-incomplete-rate`).
pub fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        Ok(r) => Err(format!("{r}: a share between 0 and 1, e.g. 0.001")),
        Err(_) => Err(format!("{text:?}: a share between 0 and 1, e.g. 0.001")),
    }
}

/// Calls per second (`--rate`): positive and finite.
pub fn per_second(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("{text:?}: calls per second, a positive number")),
    }
}

/// A percentage (`--latency-threshold`): 0 or more and finite; a trailing `%` is allowed.
pub fn percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("{text:?}: a percentage, 0 or more, e.g. 20 or 20%")),
    }
}

/// A byte size that must fit in memory (`usize`), e.g. `4MiB`.
pub fn size_usize(text: &str) -> Result<usize, String> {
    let n = size(text)?;
    usize::try_from(n).map_err(|_| format!("{text}: too large for this machine"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_units_and_bare_seconds() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("0.25"), Ok(Duration::from_millis(250)));
        for bad in [
            "",
            "3x",
            "-1",
            "s",
            "1e400",
            "99999999999999999999h",
            "NaN",
            "inf",
        ] {
            assert!(duration(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(duration("8761h").is_err());
    }

    #[test]
    fn sizes_read_suffixes_and_unlimited() {
        assert_eq!(size("64KiB"), Ok(64 << 10));
        assert_eq!(size("16MiB"), Ok(16 << 20));
        assert_eq!(size("1000"), Ok(1000));
        assert_eq!(size("2MB"), Ok(2_000_000));
        assert_eq!(size("unlimited"), Ok(u64::MAX));
        assert!(size("16 parsecs").is_err());
        assert!(size("99999999999GiB").is_err());
        assert_eq!(show_size(u64::MAX), "unlimited");
        assert_eq!(show_size(16 << 20), "16MiB");
        assert_eq!(count("unlimited"), Ok(u64::MAX));
        assert!(positive("0").is_err());
        assert!(rate("1.5").is_err());
        assert!(per_second("0").is_err());
    }
}
