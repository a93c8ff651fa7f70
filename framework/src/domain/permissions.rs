//! Team permissions, with pretix's names.

/// One permission flag of a team.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Create and clone events.
    CreateEvents,
    /// Manage teams and their tokens.
    ChangeTeams,
    /// Change organizer settings, properties and seating plans.
    ChangeOrganizerSettings,
    /// Manage gift cards.
    ManageGiftCards,
    /// Read and change events and their settings.
    ChangeEventSettings,
    /// Change items, quotas, questions.
    ChangeItems,
    /// View orders.
    ViewOrders,
    /// Change orders.
    ChangeOrders,
    /// Check in orders.
    CheckinOrders,
    /// View vouchers.
    ViewVouchers,
    /// Change vouchers.
    ChangeVouchers,
    /// Change submissions of the call for papers (talk side).
    ChangeSubmissions,
    /// Review submissions (talk side).
    Review,
}

impl Permission {
    /// Every permission, in the order of [`Permission::name`]'s table.
    pub const ALL: [Permission; 13] = [
        Permission::CreateEvents,
        Permission::ChangeTeams,
        Permission::ChangeOrganizerSettings,
        Permission::ManageGiftCards,
        Permission::ChangeEventSettings,
        Permission::ChangeItems,
        Permission::ViewOrders,
        Permission::ChangeOrders,
        Permission::CheckinOrders,
        Permission::ViewVouchers,
        Permission::ChangeVouchers,
        Permission::ChangeSubmissions,
        Permission::Review,
    ];

    /// The API and CLI name, e.g. `can_manage_gift_cards`.
    pub fn name(self) -> &'static str {
        match self {
            Permission::CreateEvents => "can_create_events",
            Permission::ChangeTeams => "can_change_teams",
            Permission::ChangeOrganizerSettings => "can_change_organizer_settings",
            Permission::ManageGiftCards => "can_manage_gift_cards",
            Permission::ChangeEventSettings => "can_change_event_settings",
            Permission::ChangeItems => "can_change_items",
            Permission::ViewOrders => "can_view_orders",
            Permission::ChangeOrders => "can_change_orders",
            Permission::CheckinOrders => "can_checkin_orders",
            Permission::ViewVouchers => "can_view_vouchers",
            Permission::ChangeVouchers => "can_change_vouchers",
            Permission::ChangeSubmissions => "can_change_submissions",
            Permission::Review => "is_reviewer",
        }
    }

    /// The permission of that name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the permission applies to the whole organizer, whatever events a team
    /// covers (as pretix's organizer permissions).
    pub fn is_organizer_level(self) -> bool {
        matches!(
            self,
            Permission::CreateEvents
                | Permission::ChangeTeams
                | Permission::ChangeOrganizerSettings
                | Permission::ManageGiftCards
        )
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PermissionSet(u16);

impl PermissionSet {
    /// No permission.
    pub const NONE: PermissionSet = PermissionSet(0);

    /// Every permission.
    pub fn all() -> Self {
        Self::from_iter(Permission::ALL)
    }

    /// Whether `p` is in the set.
    pub fn has(self, p: Permission) -> bool {
        self.0 & p.bit() != 0
    }

    /// Adds `p`.
    pub fn with(self, p: Permission) -> Self {
        Self(self.0 | p.bit())
    }

    /// Takes `p` away.
    pub fn without(self, p: Permission) -> Self {
        Self(self.0 & !p.bit())
    }

    /// Both sets together.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every permission of `other` is in the set.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The permissions of the set, in [`Permission::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Permission> {
        Permission::ALL.into_iter().filter(move |p| self.has(*p))
    }
}

impl FromIterator<Permission> for PermissionSet {
    fn from_iter<I: IntoIterator<Item = Permission>>(iter: I) -> Self {
        iter.into_iter().fold(Self::NONE, Self::with)
    }
}

/// pretix 2026's permission names (`event.orders:read`, `organizer.teams:write`, ...) and how
/// they map onto the flags. Teams keep the flags: a flag stands for the names pretix migrates
/// it to, and a set of names holds a flag when it has every name pretix checks for that flag
/// (so flags -> names -> flags is the identity; names without a flag are not kept).
pub mod names {
    use super::{Permission, PermissionSet};
    use crate::domain::refusal::Refusal;

    /// Every event-level name pretix 2026 knows.
    pub const EVENT: [&str; 12] = [
        "event.settings.general:write",
        "event.settings.payment:write",
        "event.settings.tax:write",
        "event.settings.invoicing:write",
        "event.subevents:write",
        "event.items:write",
        "event.orders:read",
        "event.orders:write",
        "event.orders:checkin",
        "event.vouchers:read",
        "event.vouchers:write",
        "event:cancel",
    ];

    /// Every organizer-level name pretix 2026 knows.
    pub const ORGANIZER: [&str; 13] = [
        "organizer.events:create",
        "organizer.settings.general:write",
        "organizer.teams:write",
        "organizer.giftcards:read",
        "organizer.giftcards:write",
        "organizer.customers:read",
        "organizer.customers:write",
        "organizer.reusablemedia:read",
        "organizer.reusablemedia:write",
        "organizer.devices:read",
        "organizer.devices:write",
        "organizer.seatingplans:write",
        "organizer.outgoingmails:read",
    ];

    /// A flag, the names it is migrated to, and the names that must all be held for it.
    type Row = (Permission, &'static [&'static str], &'static [&'static str]);

    const EVENT_FLAGS: [Row; 7] = [
        (
            Permission::ChangeEventSettings,
            &[
                "event.settings.general:write",
                "event.settings.payment:write",
                "event.settings.tax:write",
                "event.settings.invoicing:write",
                "event.subevents:write",
            ],
            &["event.settings.general:write"],
        ),
        (
            Permission::ChangeItems,
            &["event.items:write"],
            &["event.items:write"],
        ),
        (
            Permission::ViewOrders,
            &["event.orders:read"],
            &["event.orders:read"],
        ),
        (
            Permission::ChangeOrders,
            &["event.orders:write", "event:cancel"],
            &["event.orders:write"],
        ),
        (
            Permission::CheckinOrders,
            &["event.orders:checkin"],
            &["event.orders:checkin"],
        ),
        (
            Permission::ViewVouchers,
            &["event.vouchers:read"],
            &["event.vouchers:read"],
        ),
        (
            Permission::ChangeVouchers,
            &["event.vouchers:write"],
            &["event.vouchers:write"],
        ),
    ];

    const ORGANIZER_FLAGS: [Row; 4] = [
        (
            Permission::CreateEvents,
            &["organizer.events:create"],
            &["organizer.events:create"],
        ),
        (
            Permission::ChangeOrganizerSettings,
            &[
                "organizer.settings.general:write",
                "organizer.devices:read",
                "organizer.devices:write",
                "organizer.seatingplans:write",
                "organizer.outgoingmails:read",
            ],
            &["organizer.settings.general:write"],
        ),
        (
            Permission::ChangeTeams,
            &["organizer.teams:write"],
            &["organizer.teams:write"],
        ),
        (
            Permission::ManageGiftCards,
            &["organizer.giftcards:read", "organizer.giftcards:write"],
            &["organizer.giftcards:read", "organizer.giftcards:write"],
        ),
    ];

    /// One level of names: event or organizer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Level {
        /// `event.*` names.
        Event,
        /// `organizer.*` names.
        Organizer,
    }

    impl Level {
        fn rows(self) -> &'static [Row] {
            match self {
                Level::Event => &EVENT_FLAGS,
                Level::Organizer => &ORGANIZER_FLAGS,
            }
        }

        /// Whether `name` is one of this level's.
        pub fn knows(self, name: &str) -> bool {
            match self {
                Level::Event => EVENT.contains(&name),
                Level::Organizer => ORGANIZER.contains(&name),
            }
        }

        /// The level's flags.
        pub fn flags(self) -> PermissionSet {
            self.rows().iter().map(|(p, _, _)| *p).collect()
        }

        /// pretix's `all_*_permissions` of a flag set: every flag of the level but check-in.
        pub fn holds_all(self, set: PermissionSet) -> bool {
            self.rows()
                .iter()
                .filter(|(p, _, _)| *p != Permission::CheckinOrders)
                .all(|(p, _, _)| set.has(*p))
        }

        /// pretix's `limit_*_permissions` of a flag set (empty when it holds all).
        pub fn names_of(self, set: PermissionSet) -> Vec<&'static str> {
            if self.holds_all(set) {
                return Vec::new();
            }
            let mut names: Vec<&str> = self
                .rows()
                .iter()
                .filter(|(p, _, _)| set.has(*p))
                .flat_map(|(_, to, _)| to.iter().copied())
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        }

        /// The flags of the level that `all` or `names` hold.
        pub fn flags_of(self, all: bool, names: &[String]) -> PermissionSet {
            if all {
                return self.flags();
            }
            self.rows()
                .iter()
                .filter(|(_, _, needs)| needs.iter().all(|n| names.iter().any(|h| h == n)))
                .map(|(p, _, _)| *p)
                .collect()
        }
    }

    impl Level {
        /// The fields that carry the level's names.
        fn fields(self) -> (&'static str, &'static str) {
            match self {
                Level::Event => ("all_event_permissions", "limit_event_permissions"),
                Level::Organizer => ("all_organizer_permissions", "limit_organizer_permissions"),
            }
        }
    }

    /// Whether any of the older flags that pretix 2026's names replace is in the set.
    pub fn legacy(set: PermissionSet) -> bool {
        set.iter()
            .any(|p| Level::Event.flags().has(p) || Level::Organizer.flags().has(p))
    }

    /// One level's fields as sent: `all_*` and `limit_*`, each if sent.
    pub type Sent<'a> = (Level, Option<bool>, Option<&'a [String]>);

    /// pretix's error of a team as a whole.
    fn whole(message: impl Into<String>) -> Refusal {
        Refusal::field("non_field_errors", message)
    }

    /// The flags that `sent` (per level: `all_*` and `limit_*`, each if sent) makes of
    /// `current` (a new team's: none), with pretix's refusals: not together with older flags
    /// (`legacy`), no unknown names, not all and a limit at once (a field not sent keeps
    /// what `current` says for it). Levels not sent keep their flags.
    pub fn resolve(
        sent: &[Sent<'_>],
        current: PermissionSet,
        legacy: bool,
    ) -> Result<PermissionSet, Refusal> {
        if sent
            .iter()
            .all(|(_, all, limit)| all.is_none() && limit.is_none())
        {
            return Ok(current);
        }
        if legacy {
            return Err(whole(
                "You cannot set deprecated and current permission attributes at the same time.",
            ));
        }
        let mut set = current;
        for &(level, all, limit) in sent {
            if all.is_none() && limit.is_none() {
                continue;
            }
            let (all_field, limit_field) = level.fields();
            if let Some(bad) = limit.into_iter().flatten().find(|n| !level.knows(n)) {
                return Err(Refusal::field(
                    limit_field,
                    format!("\"{bad}\" is not a valid choice."),
                ));
            }
            let all = all.unwrap_or_else(|| level.holds_all(current));
            let limit: Vec<String> = match limit {
                Some(names) => names.to_vec(),
                None => (level.names_of(current).into_iter())
                    .map(str::to_owned)
                    .collect(),
            };
            if all && !limit.is_empty() {
                return Err(whole(format!(
                    "Do not set both {limit_field} and {all_field}."
                )));
            }
            let kept = level.flags().iter().fold(set, PermissionSet::without);
            set = level
                .flags_of(all, &limit)
                .iter()
                .fold(kept, PermissionSet::with);
        }
        Ok(set)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn flags_survive_a_trip_through_pretix_2026s_names() {
            for level in [Level::Event, Level::Organizer] {
                for p in level.flags().iter() {
                    let set = PermissionSet::NONE.with(p);
                    let names: Vec<String> =
                        level.names_of(set).into_iter().map(str::to_owned).collect();
                    assert_eq!(level.flags_of(false, &names), set, "{p:?}");
                }
                let all = level.flags();
                assert!(level.holds_all(all));
                assert_eq!(level.flags_of(true, &[]), all);
            }
        }

        #[test]
        fn every_mapped_name_is_a_known_one() {
            for level in [Level::Event, Level::Organizer] {
                for (_, to, needs) in level.rows() {
                    assert!(to.iter().chain(needs.iter()).all(|n| level.knows(n)));
                }
            }
        }
    }
}
