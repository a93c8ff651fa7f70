//! The PDF stack documents are made with (tickets, badges, invoices): pretix's layouts
//! read and checked ([`layout`]), backgrounds made by any tool ([`background`]), text set in
//! the built-in faces and embedded as subsets ([`fonts`], [`writer`]), QR codes as vector
//! paths. A layout is prepared once ([`Prepared`]) and renders sheets from values the rules
//! give ([`Values`]).

pub mod background;
pub mod facturx;
pub mod fonts;
pub mod image;
pub mod layout;
mod qr;
mod render;
pub mod text;
pub mod writer;

pub use background::Background;
pub use image::Image;
pub use layout::{Layout, LayoutError, Source};
pub use render::{MM, Prepared, Values, render};
