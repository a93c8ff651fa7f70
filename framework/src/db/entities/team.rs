//! A team of an organizer: a set of permissions over all or some of its events.

use sea_orm::entity::prelude::*;

/// A row of `teams`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "teams")]
pub struct Model {
    /// Internal ID.
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The organizer the team belongs to.
    pub organizer_id: i64,
    /// Team name.
    pub name: String,
    /// Whether the team has access to every event of the organizer.
    pub all_events: bool,
    /// May create events.
    pub can_create_events: bool,
    /// May manage teams and their tokens.
    pub can_change_teams: bool,
    /// May change organizer settings.
    pub can_change_organizer_settings: bool,
    /// May manage gift cards.
    pub can_manage_gift_cards: bool,
    /// May change event settings.
    pub can_change_event_settings: bool,
    /// May change items.
    pub can_change_items: bool,
    /// May view orders.
    pub can_view_orders: bool,
    /// May change orders.
    pub can_change_orders: bool,
    /// May check in orders.
    pub can_checkin_orders: bool,
    /// May view vouchers.
    pub can_view_vouchers: bool,
    /// May change vouchers.
    pub can_change_vouchers: bool,
    /// May change submissions of the call for papers (talk side).
    pub can_change_submissions: bool,
    /// Reviews submissions (talk side).
    pub is_reviewer: bool,
    /// Hides speaker names from the team's reviewers, whatever the review phase.
    pub force_hide_speaker_names: bool,
}

/// Relations (none declared; queries join explicitly).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
