//! The rules, free of HTTP: who may do what, gift card ledger, and (in later modules)
//! availability, order placement and settings.

pub mod access;
pub mod availability;
pub mod batch;
pub mod cache;
pub mod carts;
pub mod catalogue_changes;
pub mod categories;
pub mod checkin;
pub mod devices;
pub mod discounts;
pub mod event_config;
pub mod events;
pub mod extensions;
pub mod files;
pub mod giftcards;
pub mod grants;
pub mod invoices;
pub mod items;
pub mod layouts;
pub mod login_failures;
pub mod mail;
pub mod meta;
pub mod oauth;
pub mod orders;
pub mod password_resets;
pub mod permissions;
pub mod questions;
pub mod quotas;
pub mod refusal;
pub mod resellers;
pub mod sale;
pub mod sales_channels;
pub mod seating;
pub mod secrets;
pub mod sessions;
pub mod settings;
pub mod signing;
pub mod slug;
pub mod special_addresses;
pub mod storefront;
pub mod subevents;
pub mod talk;
pub mod tax_rules;
pub mod team_members;
pub mod team_tokens;
pub mod teams;
pub mod tickets;
pub mod tokens;
pub mod users;
pub mod vouchers;
pub mod waiting_list;
pub mod webhooks;

/// Most entries a list in a request body may have (IDs of items, variations or events,
/// nested objects): longer lists are refused before any query, since a statement takes a
/// limited number of values.
pub const MAX_LIST_LEN: usize = 1_000;

/// The lists among `lists` (field and number of entries) longer than [`MAX_LIST_LEN`], each
/// with its message. Validators check their lists with it first, and stop when it is not
/// empty.
pub fn overlong_lists(lists: &[(&'static str, usize)]) -> Vec<(&'static str, String)> {
    lists
        .iter()
        .filter(|(_, len)| *len > MAX_LIST_LEN)
        .map(|(field, _)| {
            (
                *field,
                format!("Ensure this field has no more than {MAX_LIST_LEN} elements."),
            )
        })
        .collect()
}
