//! Talk-side API versions. A token is fixed to the version in force when it is first used;
//! a request may ask for another with the `service-Version` header (or `Pretalx-Version`,
//! which pretalx clients send). At most two versions are served: the current one and the
//! previous one, deprecated.

use crate::domain::refusal::Refusal;

/// A served version of the talk-side API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiVersion {
    /// The previous version, deprecated: speaker email addresses may still be changed.
    V1,
    /// The current version.
    V2,
}

/// The version new tokens are fixed to.
pub const CURRENT: ApiVersion = ApiVersion::V2;

/// The request headers that choose a version for one request, in order of preference.
pub const HEADERS: [&str; 2] = ["service-version", "pretalx-version"];

/// Versions that were served once and no longer are.
const REMOVED: [&str; 1] = ["LEGACY"];

impl ApiVersion {
    /// Every served version, oldest first.
    pub const ALL: [ApiVersion; 2] = [ApiVersion::V1, ApiVersion::V2];

    /// The version's name, e.g. `v2`.
    pub fn name(self) -> &'static str {
        match self {
            ApiVersion::V1 => "v1",
            ApiVersion::V2 => "v2",
        }
    }

    /// Whether the version is served but will be removed.
    pub fn is_deprecated(self) -> bool {
        self != CURRENT
    }

    /// The served version of that name; 400 for an unknown or removed one.
    pub fn parse(name: &str) -> Result<Self, Refusal> {
        if let Some(v) = Self::ALL.into_iter().find(|v| v.name() == name) {
            return Ok(v);
        }
        let shown: String = name.chars().take(40).collect();
        if REMOVED.contains(&name) {
            return Err(Refusal::bad_request(format!(
                "API version {shown} has been removed. Please upgrade your API token to a \
                 current version in the token list at /orga/me."
            )));
        }
        Err(Refusal::bad_request(format!(
            "Unsupported version: {shown}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_versions_parse_and_others_are_refused() {
        assert_eq!(ApiVersion::parse("v2").ok(), Some(ApiVersion::V2));
        assert_eq!(ApiVersion::parse("v1").ok(), Some(ApiVersion::V1));
        assert!(ApiVersion::V1.is_deprecated());
        assert!(!CURRENT.is_deprecated());
        assert!(ApiVersion::parse("LEGACY").is_err());
        assert!(ApiVersion::parse("v3").is_err());
    }
}
