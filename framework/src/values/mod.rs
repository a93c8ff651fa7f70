//! Small value types every layer shares, below `domain` and `http`: amounts of money and
//! currencies, multi-language text, and errors in the spec's two shapes. They know nothing
//! of the database, the cache or the request path.

pub mod currency;
pub mod error;
pub mod i18n;
pub mod money;
pub mod stored;

pub use error::{ApiError, FieldErrors};
pub use i18n::I18nString;
pub use money::{Currency, Decimal2, Money};
