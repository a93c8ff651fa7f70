//! Device security profiles: allow-lists of API operations, each a method and a route
//! template of the API document (`/api/v1/organizers/{organizer}/events/{event}/items/`),
//! checked right after authentication, before anything else. `full` allows everything.
//!
//! The core ships the spec's `full`, `service_checkin` and `service_checkin_online_kiosk`,
//! and accepts pretix's names as aliases: `pretixscan` (= `service_checkin`),
//! `pretixscan_online_noorders` and `pretixscan_online_kiosk` (both
//! `service_checkin_online_kiosk`, the nearest: no order sync). Plugins bring their own
//! through [`crate::domain::extensions::Extensions::device_profiles`].

use std::sync::LazyLock;

/// One security profile.
#[derive(Debug, Clone)]
pub struct DeviceProfile {
    name: String,
    description: String,
    reported_as: Option<String>,
    /// `None`: everything is allowed.
    allows: Option<Vec<(String, String)>>,
    /// Whether ticket searches are held to what a person at a kiosk needs.
    kiosk_search: bool,
}

/// A route template without parameter names and trailing slash, so that
/// `/a/{id}/` and `/a/{list}` compare equal.
fn shape(template: &str) -> String {
    template
        .trim_end_matches('/')
        .split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// The prefix of organizer-level templates.
pub const ORGANIZER: &str = "/api/v1/organizers/{organizer}/";

impl DeviceProfile {
    /// A profile allowing every operation (within the device's permissions).
    pub fn full(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            reported_as: None,
            allows: None,
            kiosk_search: false,
        }
    }

    /// A profile allowing only these operations: (method, route template as the API document
    /// writes it, e.g. `("GET", "/api/v1/organizers/{organizer}/events/")`). Templates
    /// starting without `/` are taken below `/api/v1/organizers/{organizer}/`.
    pub fn allow_list<'a>(
        name: impl Into<String>,
        description: impl Into<String>,
        operations: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            reported_as: None,
            allows: Some(
                operations
                    .into_iter()
                    .map(|(m, t)| {
                        let full = if t.starts_with('/') {
                            t.to_owned()
                        } else {
                            format!("{ORGANIZER}{t}")
                        };
                        (m.to_ascii_uppercase(), shape(&full))
                    })
                    .collect(),
            ),
            kiosk_search: false,
        }
    }

    /// Holds the profile's ticket searches to what a person at a kiosk needs: at least
    /// three characters (or an exact secret), as for callers who may not view orders, and no
    /// ticket secrets in the answers, so that a kiosk cannot harvest secrets and names.
    pub fn with_kiosk_search(mut self) -> Self {
        self.kiosk_search = true;
        self
    }

    /// Whether ticket searches are held to a kiosk's needs ([`Self::with_kiosk_search`]).
    pub fn kiosk_search(&self) -> bool {
        self.kiosk_search
    }

    /// The name devices are told at initialization (scanner apps act on pretix's literal
    /// names); the profile's own name unless set.
    pub fn reported_as(mut self, name: impl Into<String>) -> Self {
        self.reported_as = Some(name.into());
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it is for.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The name told to devices.
    pub fn reported_name(&self) -> &str {
        self.reported_as.as_deref().unwrap_or(&self.name)
    }

    /// Whether the profile allows `method` on the route `template`.
    pub fn permits(&self, method: &str, template: &str) -> bool {
        match &self.allows {
            None => true,
            Some(ops) => {
                let t = shape(template);
                ops.iter()
                    .any(|(m, allowed)| m.eq_ignore_ascii_case(method) && *allowed == t)
            }
        }
    }

    /// The allowed operations as (method, template without parameter names); `None` for
    /// a profile that allows everything.
    pub fn operations(&self) -> Option<&[(String, String)]> {
        self.allows.as_deref()
    }
}

/// The operations of `service_checkin_online_kiosk`: online check-in and badge printing.
const KIOSK: &[(&str, &str)] = &[
    ("GET", "/api/v1/version"),
    ("GET", "/api/v1/device/info"),
    ("GET", "/api/v1/device/eventselection"),
    ("POST", "/api/v1/device/update"),
    ("POST", "/api/v1/device/roll"),
    ("POST", "/api/v1/device/revoke"),
    ("POST", "/api/v1/upload"),
    ("GET", "events/"),
    ("GET", "events/{event}/"),
    ("GET", "subevents/"),
    ("GET", "events/{event}/subevents/"),
    ("GET", "events/{event}/subevents/{id}/"),
    ("GET", "events/{event}/settings/"),
    ("GET", "events/{event}/categories/"),
    ("GET", "events/{event}/items/"),
    ("GET", "events/{event}/questions/"),
    ("GET", "events/{event}/badgelayouts/"),
    ("GET", "events/{event}/badgeitems/"),
    ("GET", "events/{event}/checkinlists/"),
    ("GET", "events/{event}/checkinlists/{id}/status/"),
    ("POST", "events/{event}/checkinlists/{id}/failed_checkins/"),
    (
        "POST",
        "events/{event}/checkinlists/{list}/positions/{secret}/redeem/",
    ),
    ("POST", "checkinrpc/redeem/"),
    ("GET", "checkinrpc/search/"),
];

/// What `service_checkin` adds to the kiosk's operations: offline sync and live
/// registration.
const CHECKIN_EXTRA: &[(&str, &str)] = &[
    ("GET", "events/{event}/checkinlists/{id}/positions/"),
    ("GET", "events/{event}/revokedsecrets/"),
    ("GET", "events/{event}/blockedsecrets/"),
    ("GET", "events/{event}/orders/"),
    ("POST", "events/{event}/orders/"),
];

/// pretix's names accepted for the spec's profiles.
pub const ALIASES: [(&str, &str); 3] = [
    ("pretixscan", "service_checkin"),
    ("pretixscan_online_noorders", "service_checkin_online_kiosk"),
    ("pretixscan_online_kiosk", "service_checkin_online_kiosk"),
];

/// The profile new devices get.
pub const DEFAULT: &str = "full";

static BUILTIN: LazyLock<Vec<DeviceProfile>> = LazyLock::new(|| {
    vec![
        DeviceProfile::full("full", "Full device access within the device permissions."),
        DeviceProfile::allow_list(
            "service_checkin",
            "Check-in staff: redeem, search, live registration, badge printing, offline sync.",
            KIOSK.iter().chain(CHECKIN_EXTRA).copied(),
        )
        .reported_as("pretixscan"),
        DeviceProfile::allow_list(
            "service_checkin_online_kiosk",
            "Badge station: online check-in and badge printing only.",
            KIOSK.iter().copied(),
        )
        .reported_as("pretixscan_online_kiosk")
        .with_kiosk_search(),
    ]
});

/// The core's profiles.
pub fn builtin() -> &'static [DeviceProfile] {
    &BUILTIN
}

/// The profile a stored name stands for: a core profile, an alias of one, or one of
/// `extra` (the plugins'); `None` for an unknown name.
pub fn find<'a>(name: &str, extra: &'a [DeviceProfile]) -> Option<&'a DeviceProfile> {
    let canonical = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, to)| to);
    BUILTIN.iter().chain(extra).find(|p| p.name == canonical)
}

/// Whether the device profile stored as `name` allows `method` on the route `template`:
/// the core's profiles are looked up without asking the plugins; a name no profile has
/// (a plugin's, since removed) allows nothing.
pub fn permits(
    name: &str,
    extra: impl FnOnce() -> Vec<DeviceProfile>,
    method: &str,
    template: &str,
) -> bool {
    if let Some(p) = find(name, &[]) {
        return p.permits(method, template);
    }
    let extra = extra();
    find(name, &extra).is_some_and(|p| p.permits(method, template))
}

/// Whether the device profile stored as `name` holds ticket searches to a kiosk's needs.
pub fn kiosk_search(name: &str, extra: impl FnOnce() -> Vec<DeviceProfile>) -> bool {
    match find(name, &[]) {
        Some(p) => p.kiosk_search(),
        None => find(name, &extra()).is_some_and(DeviceProfile::kiosk_search),
    }
}

/// The names a device may be given: the core's profiles, their aliases and the plugins'.
pub fn known_names(extra: Vec<DeviceProfile>) -> Vec<String> {
    BUILTIN
        .iter()
        .map(|p| p.name.clone())
        .chain(ALIASES.iter().map(|(a, _)| (*a).to_owned()))
        .chain(extra.into_iter().map(|p| p.name))
        .collect()
}

/// The name to tell a device with the stored profile `name`: an alias as stored (its
/// meaning is pretix's), else the profile's reported name.
pub fn reported<'a>(name: &'a str, extra: &'a [DeviceProfile]) -> &'a str {
    if ALIASES.iter().any(|(alias, _)| *alias == name) {
        return name;
    }
    find(name, extra).map_or(name, DeviceProfile::reported_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_find_the_spec_profiles() {
        assert_eq!(
            find("pretixscan", &[]).map(DeviceProfile::name),
            Some("service_checkin")
        );
        assert_eq!(
            find("pretixscan_online_noorders", &[]).map(DeviceProfile::name),
            Some("service_checkin_online_kiosk")
        );
        assert!(find("nothing", &[]).is_none());
        assert_eq!(reported("service_checkin", &[]), "pretixscan");
        assert_eq!(
            reported("pretixscan_online_noorders", &[]),
            "pretixscan_online_noorders"
        );
        assert_eq!(reported("full", &[]), "full");
    }

    #[test]
    fn templates_compare_without_parameter_names_or_trailing_slash() {
        let p = find("service_checkin", &[]).expect("profile");
        assert!(p.permits(
            "GET",
            "/api/v1/organizers/{organizer}/events/{event}/checkinlists/{list}/positions/"
        ));
        assert!(p.permits("GET", "/api/v1/device/info"));
        assert!(!p.permits(
            "POST",
            "/api/v1/organizers/{organizer}/events/{event}/items/"
        ));
        assert!(!p.permits("HEAD", "/api/v1/device/info"));
    }
}
