//! Numbers as a user would write them. Rust prints an `f64` in full, so a
//! `factor = 1e308` would come back as a 309-digit number; past the range
//! where digits read well, scientific notation is used instead.

/// `n` in plain digits from 0.0001 up to (not including) 1e16, otherwise in
/// scientific notation, the way TOML also accepts it: the same switch as
/// `{:?}` for floats, which retrykit-core's messages use, without `{:?}`'s `.0`.
///
/// ```
/// use retrykit_config::show_number;
/// assert_eq!(show_number(2.0), "2");
/// assert_eq!(show_number(0.25), "0.25");
/// assert_eq!(show_number(1e308), "1e308");
/// assert_eq!(show_number(-2.5e-7), "-2.5e-7");
/// assert_eq!(show_number(f64::INFINITY), "inf");
/// ```
pub fn show_number(n: f64) -> String {
    let magnitude = n.abs();
    if n == 0.0 || !n.is_finite() || (1e-4..1e16).contains(&magnitude) {
        n.to_string()
    } else {
        format!("{n:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::show_number;

    #[test]
    fn switches_where_debug_does() {
        for n in [1e-4, 9.99e-5, 1e15, 1e16, 123.5, 1e6] {
            let debug = format!("{n:?}");
            assert_eq!(
                show_number(n),
                debug.strip_suffix(".0").unwrap_or(&debug),
                "{n}"
            );
        }
    }
}
