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
