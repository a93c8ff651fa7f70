//! Tessera: an event-ticketing back end with pretix's JSON API.
//!
//! A host binary assembles a server with [`App`]: a [`Config`], the compiled-in plugins,
//! and a database (SQLite by default, PostgreSQL when the URL says so):
//!
//! ```no_run
//! # async fn run() -> Result<(), tessera::StartError> {
//! let config = tessera::Config::load(Default::default()).expect("config");
//! tessera::App::new(config).build().await?.run().await
//! # }
//! ```

pub mod admin;
pub mod api;
mod app;
pub mod config;
pub mod db;
pub mod domain;
pub mod http;
pub mod logging;
pub mod metrics;
pub mod ops;
pub mod pdf;
pub mod plugin;
pub mod state;
pub mod values;
pub mod web;

pub use app::{App, Server, StartError, openapi_document, openapi_json};
pub use config::Config;
pub use domain::cache;
pub use plugin::Plugin;
pub use state::AppState;
