//! `ticketoutputpdf` and `badges`: tickets and badges as PDF files, printed with the event's
//! layouts in pretix's format (`ticketlayouts/`, `badgelayouts/`). They bring ticket
//! outputs, `pdf` and `badge`, through the core's port; the layouts and the rendering are
//! the core's (`domain::layouts`, `pdf`). Events name them as pretix does too:
//! `pretix.plugins.ticketoutputpdf` and `pretix.plugins.badges`.

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbErr};
use serde_json::json;
use tessera::Plugin;
use tessera::domain::layouts::{self, Kind};
use tessera::domain::settings::{Level, SettingDef, SettingType};
use tessera::plugin::ticket_output::{TicketFile, TicketOutput, TicketRequest};

/// PDF tickets.
#[derive(Debug, Default)]
pub struct PdfTickets;

impl Plugin for PdfTickets {
    fn name(&self) -> &str {
        "ticketoutputpdf"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn description(&self) -> &str {
        "PDF tickets printed with the event's ticket layouts"
    }

    fn pretix_name(&self) -> Option<&str> {
        Some("pretix.plugins.ticketoutputpdf")
    }

    /// pretix's switch of the output, on for events that enable the plugin.
    fn settings(&self) -> Vec<SettingDef> {
        vec![
            SettingDef::new(
                "ticketoutput_pdf__enabled",
                SettingType::Bool,
                json!(true),
                "PDF tickets",
                "Offers the tickets as PDF files.",
            )
            .level(Level::Event),
        ]
    }

    fn ticket_outputs(&self) -> Vec<Arc<dyn TicketOutput>> {
        vec![Arc::new(Output(Kind::Ticket))]
    }
}

/// Badges, printed at check-in.
#[derive(Debug, Default)]
pub struct Badges;

impl Plugin for Badges {
    fn name(&self) -> &str {
        "badges"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn description(&self) -> &str {
        "Attendee badges printed with the event's badge layouts"
    }

    fn pretix_name(&self) -> Option<&str> {
        Some("pretix.plugins.badges")
    }

    fn ticket_outputs(&self) -> Vec<Arc<dyn TicketOutput>> {
        vec![Arc::new(Output(Kind::Badge))]
    }
}

/// The output printing a kind of layout.
#[derive(Debug)]
struct Output(Kind);

#[async_trait::async_trait]
impl TicketOutput for Output {
    fn identifier(&self) -> &str {
        match self.0 {
            Kind::Ticket => "pdf",
            Kind::Badge => "badge",
        }
    }

    fn name(&self) -> &str {
        match self.0 {
            Kind::Ticket => "PDF",
            Kind::Badge => "Badge",
        }
    }

    /// Badges are for the staff at the door, not offered with the order.
    fn offered_to_customers(&self) -> bool {
        self.0 == Kind::Ticket
    }

    async fn render(
        &self,
        db: &DatabaseConnection,
        request: &TicketRequest<'_>,
    ) -> Result<TicketFile, DbErr> {
        Ok(TicketFile {
            content_type: "application/pdf".into(),
            extension: ".pdf".into(),
            data: layouts::render(db, self.0, request).await?,
        })
    }
}
