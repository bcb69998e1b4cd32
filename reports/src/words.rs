//! Small pieces of English shared by the terminal and HTML reports.

/// The plural ending of a count: `""` for one, `"s"` otherwise
/// ("1 run", "2 runs", "0 runs").
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(format!("1 thread{}", plural(1)), "1 thread");
        assert_eq!(format!("2 thread{}", plural(2)), "2 threads");
        assert_eq!(format!("0 run{}", plural(0)), "0 runs");
    }
}
