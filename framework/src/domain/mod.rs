//! The rules, free of HTTP: who may do what, gift card ledger, and (in later modules)
//! availability, order placement and settings.

pub mod availability;
pub mod categories;
pub mod currency;
pub mod event_config;
pub mod events;
pub mod files;
pub mod giftcards;
pub mod items;
pub mod meta;
pub mod permissions;
pub mod questions;
pub mod quotas;
pub mod sale;
pub mod seating;
pub mod settings;
pub mod signing;
pub mod slug;
pub mod subevents;
pub mod tax_rules;
pub mod teams;
pub mod tokens;
pub mod vouchers;
