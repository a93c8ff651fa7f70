//! The HTTP surface, end to end: one test binary, one fresh database per test.

mod auth;
mod demo;
mod errors;
mod events;
mod giftcards;
mod giftcards_accepted;
mod openapi;
mod organizers;
mod pagination;
mod properties;
mod settings;
mod teams;
