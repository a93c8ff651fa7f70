//! Database migrations of Tessera, for SQLite and PostgreSQL alike.

pub use sea_orm_migration::prelude::*;

mod m0001_foundation;
mod m0002_events;
mod m0003_seating;
mod m0004_event_config;
mod m0005_quotas;
mod m0006_catalogue;
mod m0007_selling;
mod m0008_mail_idempotency;
mod m0009_upload_limits;
mod m0010_config_changes;
mod m0011_accounts;
mod m0012_one_grant_per_application;
mod m0013_talk;
mod m0014_talk_file_references;
mod m0015_talk_schedule;
mod m0016_talk_reviews;
mod m0017_devices;
mod m0018_checkin;
mod m0019_ticket_secrets;
mod m0020_order_approval;
mod m0021_refunds;
mod m0022_bank_import;
mod m0023_webhooks;
mod m0024_more_config_tables;
mod m0025_quota_holds_function;
mod m0026_changes_name_their_schema;
mod m0027_order_desk_fields;
mod m0028_canceled_positions;
mod m0029_print_logs;
mod m0030_meta_properties_2026;
mod m0031_team_invites;
mod m0032_sales_channels;
mod m0033_subevent_seats;
mod m0034_password_resets;
mod m0035_pdf_layouts;
mod m0036_mail_attachments;
mod m0037_layouts_are_configuration;
mod m0038_invoices;
mod m0039_invoice_writes;
mod m0040_payments_on_the_page;
mod m0041_shop_carts;
mod m0042_cart_addons;
mod m0043_discounts;
mod m0044_voucher_inclusions;
mod schema_helpers;

pub use m0010_config_changes::CONFIG_TABLES;

/// Every migration of the schema, in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m0001_foundation::Migration),
            Box::new(m0002_events::Migration),
            Box::new(m0003_seating::Migration),
            Box::new(m0004_event_config::Migration),
            Box::new(m0005_quotas::Migration),
            Box::new(m0006_catalogue::Migration),
            Box::new(m0007_selling::Migration),
            Box::new(m0008_mail_idempotency::Migration),
            Box::new(m0009_upload_limits::Migration),
            Box::new(m0010_config_changes::Migration),
            Box::new(m0011_accounts::Migration),
            Box::new(m0012_one_grant_per_application::Migration),
            Box::new(m0013_talk::Migration),
            Box::new(m0014_talk_file_references::Migration),
            Box::new(m0015_talk_schedule::Migration),
            Box::new(m0016_talk_reviews::Migration),
            Box::new(m0017_devices::Migration),
            Box::new(m0018_checkin::Migration),
            Box::new(m0019_ticket_secrets::Migration),
            Box::new(m0020_order_approval::Migration),
            Box::new(m0021_refunds::Migration),
            Box::new(m0022_bank_import::Migration),
            Box::new(m0023_webhooks::Migration),
            Box::new(m0024_more_config_tables::Migration),
            Box::new(m0025_quota_holds_function::Migration),
            Box::new(m0026_changes_name_their_schema::Migration),
            Box::new(m0027_order_desk_fields::Migration),
            Box::new(m0028_canceled_positions::Migration),
            Box::new(m0029_print_logs::Migration),
            Box::new(m0030_meta_properties_2026::Migration),
            Box::new(m0031_team_invites::Migration),
            Box::new(m0032_sales_channels::Migration),
            Box::new(m0033_subevent_seats::Migration),
            Box::new(m0034_password_resets::Migration),
            Box::new(m0035_pdf_layouts::Migration),
            Box::new(m0036_mail_attachments::Migration),
            Box::new(m0037_layouts_are_configuration::Migration),
            Box::new(m0038_invoices::Migration),
            Box::new(m0039_invoice_writes::Migration),
            Box::new(m0040_payments_on_the_page::Migration),
            Box::new(m0041_shop_carts::Migration),
            Box::new(m0042_cart_addons::Migration),
            Box::new(m0043_discounts::Migration),
            Box::new(m0044_voucher_inclusions::Migration),
        ]
    }
}
