//! The rules, free of HTTP: who may do what, gift card ledger, and (in later modules)
//! availability, order placement and settings.

pub mod currency;
pub mod giftcards;
pub mod permissions;
pub mod seating;
pub mod slug;
pub mod teams;
pub mod tokens;
