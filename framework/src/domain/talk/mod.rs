//! The talk side (`/api/`): conference data for organisers and reviewers, following
//! pretalx's REST API. User API tokens and their scopes ([`tokens`]), API versions
//! ([`version`]), who may see which event and how ([`access`]), and the activity log of
//! every object ([`log`]).

pub mod access;
pub mod answers;
pub mod availability;
pub mod catalog;
pub mod demo;
pub mod endpoints;
pub mod exports;
pub mod log;
pub mod questions;
pub mod review_phases;
pub mod reviews;
pub mod rooms;
pub mod schedule;
pub mod speakers;
pub mod sql;
pub mod submission_state;
pub mod submissions;
pub mod tokens;
pub mod version;
