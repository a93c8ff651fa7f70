//! The plugin's tables (created by the core's migrations, as pretix ships its bank transfer
//! plugin's): import jobs and their transactions.

/// A row of `bank_import_jobs`.
pub mod job {
    use sea_orm::entity::prelude::*;

    /// An import of one bank statement.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "bank_import_jobs")]
    pub struct Model {
        /// ID.
        #[sea_orm(primary_key)]
        pub id: i64,
        /// The organizer.
        pub organizer_id: i64,
        /// The event whose orders it pays; none: every event of the organizer.
        pub event_id: Option<i64>,
        /// When it was uploaded.
        pub created: ChronoDateTimeUtc,
        /// `pending`, `running`, `completed` or `error`.
        pub state: String,
        /// The statement's currency.
        pub currency: String,
    }

    /// Relations (none declared; queries join explicitly).
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// A row of `bank_transactions`.
pub mod transaction {
    use sea_orm::entity::prelude::*;

    /// A transaction of a statement and what it did.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "bank_transactions")]
    pub struct Model {
        /// ID.
        #[sea_orm(primary_key)]
        pub id: i64,
        /// The job that imported it.
        pub job_id: i64,
        /// The organizer.
        pub organizer_id: i64,
        /// `imported`, `nomatch`, `invalid`, `error`, `valid`, `discarded` or `already`.
        pub state: String,
        /// Why it ended as it did.
        pub message: String,
        /// What makes it the same transaction when a statement is imported again.
        pub checksum: String,
        /// Who paid.
        pub payer: String,
        /// The payer's reference.
        pub reference: String,
        /// The amount, in cents; negative for a debit.
        pub amount_cents: i64,
        /// The booking date, as the bank gives it.
        pub date: String,
        /// The order it matched.
        pub order_id: Option<i64>,
        /// The organizer's comment.
        pub comment: String,
        /// The payer's IBAN.
        pub iban: String,
        /// The payer's BIC.
        pub bic: String,
        /// The bank's ID of the transaction.
        pub external_id: String,
    }

    /// Relations (none declared; queries join explicitly).
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
