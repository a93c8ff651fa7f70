//! sea-orm entities, one module per table.

pub mod category;
pub mod event;
pub mod giftcard;
pub mod giftcard_acceptance;
pub mod giftcard_transaction;
pub mod item;
pub mod meta_property;
pub mod order;
pub mod organizer;
pub mod quota;
pub mod seat;
pub mod seating_plan;
pub mod setting;
pub mod subevent;
pub mod subevent_item_price;
pub mod tax_rule;
pub mod team;
pub mod team_event;
pub mod team_token;
