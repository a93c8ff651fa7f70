//! Small value types every layer shares, below `domain` and `http`: amounts of money and
//! currencies, multi-language text, the service's own texts in the reader's language, instants as the API prints them, and field errors in the spec's shape. They know nothing
//! of the database, the cache or the request path.

pub mod currency;
pub mod error;
pub mod i18n;
pub mod money;
pub mod reldate;
pub mod stored;
pub mod texts;
pub mod timestamp;

pub use error::FieldErrors;
pub use i18n::I18nString;
pub use money::{Currency, Decimal2, Money};
pub use timestamp::Timestamp;

/// The current time to the microsecond, as pretix keeps and prints times (PostgreSQL stores
/// no finer, and a time read back must equal the one answered before it was stored).
pub fn now() -> chrono::DateTime<chrono::Utc> {
    use chrono::SubsecRound;
    chrono::Utc::now().trunc_subsecs(6)
}
