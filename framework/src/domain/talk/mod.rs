//! The talk side (`/api/`): conference data for organisers and reviewers, following
//! pretalx's REST API. User API tokens and their scopes ([`tokens`]), API versions
//! ([`version`]), who may see which event and how ([`access`]), and the activity log of
//! every object ([`log`]).

pub mod access;
pub mod demo;
pub mod log;
pub mod tokens;
pub mod version;
