//! Invoices as pretix keeps them: a snapshot of the issuer, the buyer, the texts and the lines
//! taken when the invoice is issued (invoices must not change with the order afterwards), a
//! number unique per organizer and prefix, and whether a cancellation refers to it.
//!
//! Numbers come from `invoice_counters`, one row per organizer and prefix, advanced inside the
//! transaction that writes the invoice: the row stays locked until that transaction ends, so
//! a number is used exactly when its invoice is committed. That keeps numbering gapless
//! across processes and rollbacks, which a `max + 1` over the invoices cannot.
//!
//! A mail of the outbox may carry invoices (`attach_invoices`, their IDs), as pretix attaches
//! the invoices a step of an order made to the mail about that step.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("invoice_counters")
                .col(big_integer("organizer_id"))
                .col(string_len("prefix", 190))
                .col(big_integer("last"))
                .primary_key(Index::create().col("organizer_id").col("prefix"))
                .foreign_key(&mut fk("invoice_counters", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("invoices")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(big_integer("event_id"))
                .col(big_integer("order_id"))
                .col(string_len("prefix", 190))
                .col(string_len("invoice_no", 19))
                .col(string_len("full_invoice_no", 190))
                .col(boolean("is_cancellation"))
                .col(big_integer_null("refers_id"))
                .col(boolean("canceled").default(false))
                .col(date("date"))
                .col(timestamp_with_time_zone("created"))
                .col(string_len("locale", 32))
                .col(string_len("currency", 3))
                .col(text("invoice_from"))
                .col(text("invoice_from_name"))
                .col(text("invoice_from_zipcode"))
                .col(text("invoice_from_city"))
                .col(text("invoice_from_state"))
                .col(string_len("invoice_from_country", 2))
                .col(text("invoice_from_tax_id"))
                .col(text("invoice_from_vat_id"))
                .col(text("invoice_to"))
                .col(boolean_null("invoice_to_is_business"))
                .col(text("invoice_to_company"))
                .col(text("invoice_to_name"))
                .col(text("invoice_to_street"))
                .col(text("invoice_to_zipcode"))
                .col(text("invoice_to_city"))
                .col(text("invoice_to_state"))
                .col(string_len("invoice_to_country", 2))
                .col(text("invoice_to_vat_id"))
                .col(text("invoice_to_beneficiary"))
                .col(text("internal_reference"))
                .col(text("custom_field"))
                .col(text("introductory_text"))
                .col(text("additional_text"))
                .col(text("payment_provider_text"))
                .col(text("footer_text"))
                .col(boolean("reverse_charge"))
                .col(json_binary("lines"))
                .col(string_len("transmission_type", 64))
                .col(string_len_null("transmission_provider", 190))
                .col(string_len("transmission_status", 32))
                .col(timestamp_with_time_zone_null("transmission_date"))
                .col(json_binary_null("transmission_info"))
                .col(boolean_null("sent_to_organizer"))
                .col(boolean("shredded").default(false))
                .col(big_integer("version").default(1))
                .foreign_key(&mut fk("invoices", "organizer_id", "organizers"))
                .foreign_key(&mut fk("invoices", "event_id", "events"))
                .foreign_key(&mut fk("invoices", "order_id", "orders"))
                .foreign_key(&mut fk("invoices", "refers_id", "invoices"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "invoices_number",
            "invoices",
            &["organizer_id", "prefix", "invoice_no"],
        ))
        .await?;
        m.create_index(index(
            "invoices_full_number",
            "invoices",
            &["organizer_id", "full_invoice_no"],
        ))
        .await?;
        m.create_index(index("invoices_order", "invoices", &["order_id"]))
            .await?;
        m.create_index(index("invoices_event", "invoices", &["event_id", "id"]))
            .await?;
        m.alter_table(
            Table::alter()
                .table("outbox_mails")
                .add_column(json_binary_null("attach_invoices"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("outbox_mails")
                .drop_column("attach_invoices")
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table("invoices").to_owned())
            .await?;
        m.drop_table(Table::drop().table("invoice_counters").to_owned())
            .await
    }
}
