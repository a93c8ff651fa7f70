//! Slugs: the short names of organizers and events in URLs.

/// Letters, digits, `-` and `.`, starting with a letter or digit, at most 50 characters.
pub fn is_valid(slug: &str) -> bool {
    let mut chars = slug.chars();
    slug.len() <= 50
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs_are_short_url_safe_names() {
        assert!(super::is_valid("demo"));
        assert!(super::is_valid("conf-2027.x"));
        assert!(!super::is_valid(""));
        assert!(!super::is_valid("-demo"));
        assert!(!super::is_valid("a/b"));
        assert!(!super::is_valid(&"a".repeat(51)));
    }
}
