//! The seeds of a command: `--seed S` and `N` seeds mean S, S+1, ..., S+N-1.
//!
//! Seeds are `u64`. A range that would run past the largest (2^64 - 1) must
//! not wrap around to 0: the runs would silently be those of other seeds, and
//! a result reported "from seed S" would hold seed 0's. So the range is
//! checked once, where the command reads its options, and refused with their
//! names.

/// The seeds `first`, `first + 1`, ... (`count` of them), or an error naming
/// the options: `first_option` (`--seed`) and `count_option`, which says
/// where the count came from (`--seeds 2`, the scenario's `` `seeds = 50` ``).
pub fn seed_range(
    first: u64,
    count: u64,
    first_option: &str,
    count_option: &str,
) -> Result<std::ops::RangeInclusive<u64>, String> {
    if count == 0 {
        return Err(format!("{count_option}: must be at least 1"));
    }
    match first.checked_add(count - 1) {
        Some(last) => Ok(first..=last),
        None => Err(format!(
            "{first_option} {first} and {count_option}: the seeds would run past {}, the largest seed; lower {first_option} to at most {}",
            u64::MAX,
            u64::MAX - (count - 1)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_up_to_the_largest_seed() {
        assert_eq!(seed_range(1, 3, "--seed", "--seeds 3"), Ok(1..=3));
        assert_eq!(
            seed_range(u64::MAX, 1, "--seed", "--seeds 1"),
            Ok(u64::MAX..=u64::MAX)
        );
        assert_eq!(
            seed_range(u64::MAX - 1, 2, "--seed", "--seeds 2"),
            Ok(u64::MAX - 1..=u64::MAX)
        );
    }

    #[test]
    fn a_range_past_it_names_both_options() {
        let e = seed_range(u64::MAX, 2, "--seed", "--seeds 2").unwrap_err();
        assert_eq!(
            e,
            "--seed 18446744073709551615 and --seeds 2: the seeds would run past \
             18446744073709551615, the largest seed; lower --seed to at most 18446744073709551614"
        );
        let e = seed_range(u64::MAX - 10, 50, "--seed", "the scenario's `seeds = 50`").unwrap_err();
        assert!(e.contains("the scenario's `seeds = 50`"), "{e}");
        let e = seed_range(5, 0, "--seed", "--seeds").unwrap_err();
        assert_eq!(e, "--seeds: must be at least 1");
    }
}
