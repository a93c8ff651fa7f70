//! Slugs: the short names of organizers and events in URLs.

/// Letters, digits, `-` and `.`, starting with a letter or digit, at most 50 characters.
pub fn is_valid(slug: &str) -> bool {
    let mut chars = slug.chars();
    slug.len() <= 50
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

/// Organizer slugs the service's own paths take (`/api/`, `/login`, ...) or that pretix keeps
/// for its own: an organizer of such a slug would have no pages.
const ORGANIZER_RESERVED: [&str; 25] = [
    "about",
    "account",
    "accessibility",
    "api",
    "control",
    "csp_report",
    "docs",
    "download",
    "healthcheck",
    "invite",
    "jsi18n",
    "lead",
    "locale",
    "login",
    "logout",
    "media",
    "metrics",
    "orga",
    "password",
    "pretixdroid",
    "redirect",
    "scheduling",
    "static",
    "widget",
    "favicon.ico",
];

/// Event slugs that the organizer's own pages take (`/{organizer}/widget/...`) or that pretix
/// keeps for its own.
const EVENT_RESERVED: [&str; 18] = [
    "account",
    "accessibility",
    "api",
    "control",
    "csp_report",
    "customer",
    "download",
    "events",
    "healthcheck",
    "jsi18n",
    "lead",
    "locale",
    "metrics",
    "redeem",
    "redirect",
    "resend",
    "static",
    "widget",
];

/// Whether `slug` names no path of the service's own at an organizer's place in a URL.
pub fn is_free_for_organizer(slug: &str) -> bool {
    !ORGANIZER_RESERVED
        .iter()
        .any(|r| r.eq_ignore_ascii_case(slug))
}

/// Whether `slug` names no path of the service's own at an event's place in a URL.
pub fn is_free_for_event(slug: &str) -> bool {
    !EVENT_RESERVED.iter().any(|r| r.eq_ignore_ascii_case(slug))
}

/// pretix's answer to a reserved slug.
pub fn reserved_message(slug: &str) -> String {
    format!("This field has an invalid value: {slug}.")
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs_the_services_paths_take_are_not_free() {
        for taken in ["api", "LOGIN", "widget", "media"] {
            assert!(!super::is_free_for_organizer(taken), "{taken}");
        }
        for taken in ["widget", "Redeem", "account"] {
            assert!(!super::is_free_for_event(taken), "{taken}");
        }
        assert!(super::is_free_for_organizer("acme"));
        assert!(super::is_free_for_event("conf"));
    }

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
