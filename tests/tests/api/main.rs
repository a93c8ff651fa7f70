//! The HTTP surface, end to end: one test binary, one fresh database per test.

mod auth;
mod errors;
mod giftcards;
mod giftcards_accepted;
mod openapi;
mod organizers;
mod pagination;
mod seating;
mod teams;
