//! Tickets in the mail. pretix attaches an order's tickets to the mails about it being
//! placed, approved, paid and changed; here such a mail names its order in the outbox, and
//! the files are made as it is sent, so that they show the order as it is then, and only
//! when the order may have them then.

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbErr, EntityTrait};

use super::{Maker, file_name, has_ticket, offered, render};
use crate::db::entities::{event, order, outbox_mail};
use crate::domain::cache::Cache;
use crate::domain::extensions::Extensions;
use crate::domain::mail::{Attachment, Attachments};
use crate::domain::orders::ticket::TicketNames;
use crate::domain::settings::{self, SettingsRegistry};

/// The tickets a mail carries: one file of the whole order from each output offered to
/// buyers, when the event attaches tickets to mails (`mail_attach_tickets`), lets buyers
/// download them and the order may have them.
pub struct MailedTickets {
    db: DatabaseConnection,
    registry: Arc<SettingsRegistry>,
    cache: Arc<Cache>,
    extensions: Arc<dyn Extensions>,
}

impl MailedTickets {
    /// Tickets made from this database, with these settings and extensions.
    pub fn new(
        db: DatabaseConnection,
        registry: Arc<SettingsRegistry>,
        cache: Arc<Cache>,
        extensions: Arc<dyn Extensions>,
    ) -> Self {
        Self {
            db,
            registry,
            cache,
            extensions,
        }
    }
}

#[async_trait::async_trait]
impl Attachments for MailedTickets {
    async fn of(&self, mail: &outbox_mail::Model) -> Result<Vec<Attachment>, DbErr> {
        let db = &self.db;
        let Some(order_id) = mail.attach_tickets_of else {
            return Ok(Vec::new());
        };
        let Some(row) = order::Entity::find_by_id(order_id).one(db).await? else {
            return Ok(Vec::new());
        };
        let Some(ev) = event::Entity::find_by_id(row.event_id).one(db).await? else {
            return Ok(Vec::new());
        };
        let cache = self.cache.current().await;
        let values = settings::of_event(db, &self.registry, cache, &ev).await?;
        let attach = values.get("mail_attach_tickets").and_then(|v| v.as_bool());
        let outputs = offered(&*self.extensions, &ev, &values, &row, crate::values::now());
        if attach != Some(true) || outputs.is_empty() {
            return Ok(Vec::new());
        }
        let Some(o) = crate::domain::orders::complete(db, vec![row]).await?.pop() else {
            return Ok(Vec::new());
        };
        let names = TicketNames::of_event(db, cache, &ev, &o.positions).await?;
        if !o.positions.iter().any(|p| has_ticket(p, &names, &values)) {
            return Ok(Vec::new());
        }
        let maker = Maker {
            db,
            cache,
            extensions: &*self.extensions,
            settings: &values,
        };
        let mut files = Vec::with_capacity(outputs.len());
        for output in outputs {
            let file = render(maker, output.as_ref(), &ev, (&o, &names), None).await?;
            files.push(Attachment {
                file_name: file_name(&ev, &o.row, None, output.identifier(), &file.extension),
                content_type: file.content_type,
                data: file.data,
            });
        }
        Ok(files)
    }
}
