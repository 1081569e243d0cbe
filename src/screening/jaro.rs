//! Jaro-Winkler for the matcher's hot loop: the same function as `strsim::jaro_winkler`, computed
//! on bytes with bit masks when both sides are ASCII and at most 64 bytes long (every normalised
//! name token is), and delegated to strsim otherwise.
//!
//! strsim walks `chars()` and allocates its match flags on every call; candidate scoring calls this
//! a few hundred times per query, so the allocation and the UTF-8 decoding were a quarter of a
//! query's instructions. The result is bit-for-bit strsim's (a property test checks it).

/// Jaro-Winkler similarity in [0, 1], identical to `strsim::jaro_winkler`.
pub fn jaro_winkler(a: &str, b: &str) -> f64 {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > 64 || b.len() > 64 || !a.is_ascii() || !b.is_ascii() {
        // Strings from bytes that were `&str`, so this cannot fail; strsim handles the rest.
        return match (std::str::from_utf8(a), std::str::from_utf8(b)) {
            (Ok(a), Ok(b)) => strsim::jaro_winkler(a, b),
            _ => 0.0,
        };
    }
    let sim = ascii_jaro(a, b);
    if sim <= 0.7 {
        return sim;
    }
    let prefix = a.iter().take(4).zip(b).take_while(|(x, y)| x == y).count();
    sim + 0.1 * prefix as f64 * (1.0 - sim)
}

/// Jaro similarity of two ASCII byte strings of at most 64 bytes each.
// Indexing by position mirrors strsim's scan (clippy 1.95 suggests an iterator here).
#[allow(clippy::needless_range_loop)]
fn ascii_jaro(a: &[u8], b: &[u8]) -> f64 {
    let (a_len, b_len) = (a.len(), b.len());
    if a_len == 0 && b_len == 0 {
        return 1.0;
    }
    if a_len == 0 || b_len == 0 {
        return 0.0;
    }
    let search_range = (a_len.max(b_len) / 2).saturating_sub(1);
    let mut a_flags = 0u64;
    let mut b_flags = 0u64;
    let mut matches = 0usize;
    for (i, &a_byte) in a.iter().enumerate() {
        let low = i.saturating_sub(search_range);
        let high = (i + search_range + 1).min(b_len);
        // The first free position of the same byte inside the window, as strsim's scan takes.
        let window = b.get(low..high).unwrap_or_default();
        for (offset, &b_byte) in window.iter().enumerate() {
            let bit = 1u64 << (low + offset);
            if b_byte == a_byte && b_flags & bit == 0 {
                a_flags |= 1u64 << i;
                b_flags |= bit;
                matches += 1;
                break;
            }
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // Matched characters in order on both sides; count the positions where they differ.
    let mut transpositions = 0usize;
    let mut b_rest = b_flags;
    let mut a_rest = a_flags;
    while a_rest != 0 {
        let i = a_rest.trailing_zeros() as usize;
        let j = b_rest.trailing_zeros() as usize;
        if a[i] != b[j] {
            transpositions += 1;
        }
        a_rest &= a_rest - 1;
        b_rest &= b_rest - 1;
    }
    transpositions /= 2;
    ((matches as f64 / a_len as f64)
        + (matches as f64 / b_len as f64)
        + ((matches - transpositions) as f64 / matches as f64))
        / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values_match_strsim() {
        for (a, b) in [
            ("martha", "marhta"),
            ("dixon", "dicksonx"),
            ("vladimir", "vladimirovich"),
            ("", ""),
            ("a", ""),
            ("cheeseburger", "cheese fries"),
            ("abc", "abc"),
            ("muammar", "moammar"),
        ] {
            assert_eq!(jaro_winkler(a, b), strsim::jaro_winkler(a, b), "{a} / {b}");
        }
    }

    #[test]
    fn non_ascii_and_long_strings_fall_back_to_strsim() {
        let long = "a".repeat(70);
        assert_eq!(
            jaro_winkler(&long, "aaa"),
            strsim::jaro_winkler(&long, "aaa")
        );
        assert_eq!(
            jaro_winkler("müller", "muller"),
            strsim::jaro_winkler("müller", "muller")
        );
    }

    proptest! {
        #[test]
        fn ascii_jaro_winkler_is_exactly_strsim(a in "[a-e]{0,70}", b in "[a-e]{0,70}") {
            prop_assert_eq!(jaro_winkler(&a, &b), strsim::jaro_winkler(&a, &b));
        }

        #[test]
        fn printable_ascii_up_to_the_mask_width_is_exactly_strsim(a in "[ -~]{0,64}", b in "[ -~]{0,64}") {
            prop_assert_eq!(jaro_winkler(&a, &b), strsim::jaro_winkler(&a, &b));
        }

        #[test]
        fn realistic_tokens_are_exactly_strsim(a in "[a-z]{1,16}", b in "[a-z]{1,16}") {
            prop_assert_eq!(jaro_winkler(&a, &b), strsim::jaro_winkler(&a, &b));
        }
    }
}
