//! The HTTP surface, end to end: one test binary, one fresh database per test.

mod auth;
mod catalogue_clone;
mod catalogue_support;
mod categories;
mod config_support;
mod demo;
mod errors;
mod event_config;
mod events;
mod giftcards;
mod giftcards_accepted;
mod item_parts;
mod items;
mod openapi;
mod organizers;
mod pagination;
mod properties;
mod questions;
mod quotas;
mod seating;
mod settings;
mod subevents;
mod taxrules;
mod teams;
mod uploads;
