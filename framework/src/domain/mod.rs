//! The rules, free of HTTP: who may do what, gift card ledger, and (in later modules)
//! availability, order placement and settings.

pub mod currency;
pub mod events;
pub mod giftcards;
pub mod meta;
pub mod permissions;
pub mod settings;
pub mod signing;
pub mod slug;
pub mod teams;
pub mod tokens;
