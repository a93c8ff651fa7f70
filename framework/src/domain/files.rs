//! Uploaded files. An upload is kept for 24 hours for the caller who sent it; a resource
//! that takes it (an item's picture) claims it, and from then on it is served publicly under
//! its unguessable key.

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};

use crate::db::entities::file;

/// How long an unclaimed upload stays usable.
pub const UPLOAD_LIFETIME: Duration = Duration::hours(24);

/// Largest accepted upload, in bytes.
pub const MAX_SIZE: usize = 10 * 1024 * 1024;

/// Media types accepted for upload (what any resource may take).
pub const ACCEPTED_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
];

/// Media types an item's picture may have: images only.
pub const PICTURE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Prefix of the file IDs clients send back.
const ID_PREFIX: &str = "file:";

/// Stores an upload of `owner` (the caller's identity); returns the file ID to send back.
pub async fn upload(
    db: &impl ConnectionTrait,
    owner: &str,
    filename: &str,
    content_type: &str,
    data: Vec<u8>,
) -> Result<String, DbErr> {
    let key: String = {
        let bytes: [u8; 16] = rand::rng().random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    };
    let now = Utc::now();
    file::ActiveModel {
        id: Set(key.clone()),
        owner: Set(owner.to_owned()),
        filename: Set(filename.to_owned()),
        content_type: Set(content_type.to_owned()),
        data: Set(data),
        created: Set(now),
        expires: Set(Some(now + UPLOAD_LIFETIME)),
    }
    .insert(db)
    .await?;
    // Forget what nobody claimed in time.
    file::Entity::delete_many()
        .filter(file::Column::Expires.lt(now))
        .exec(db)
        .await?;
    Ok(format!("{ID_PREFIX}{key}"))
}

/// Why an upload was not claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimRefused {
    /// No unexpired, unclaimed upload of this owner has the file ID.
    Unknown,
    /// The upload's media type is not one the resource takes; it stays unclaimed.
    WrongType,
}

/// Claims an upload of `owner` by its file ID, when its media type is one of `accepted`;
/// returns its stored reference (`<key>/<file name>`). Claim in the transaction that writes
/// the resource taking it, so that a failed write leaves the upload unclaimed. An upload is
/// claimed once, even by concurrent requests.
pub async fn claim(
    db: &impl ConnectionTrait,
    owner: &str,
    file_id: &str,
    accepted: &[&str],
) -> Result<Result<String, ClaimRefused>, DbErr> {
    let Some(key) = file_id.strip_prefix(ID_PREFIX) else {
        return Ok(Err(ClaimRefused::Unknown));
    };
    let now = Utc::now();
    let Some(found) = file::Entity::find_by_id(key.to_owned())
        .filter(file::Column::Owner.eq(owner))
        .filter(file::Column::Expires.gt(now))
        .one(db)
        .await?
    else {
        return Ok(Err(ClaimRefused::Unknown));
    };
    if !accepted.contains(&found.content_type.as_str()) {
        return Ok(Err(ClaimRefused::WrongType));
    }
    let claimed = file::Entity::update_many()
        .col_expr(file::Column::Expires, Expr::value(None::<DateTime<Utc>>))
        .filter(file::Column::Id.eq(key))
        .filter(file::Column::Owner.eq(owner))
        .filter(file::Column::Expires.gt(now))
        .exec(db)
        .await?;
    if claimed.rows_affected == 0 {
        return Ok(Err(ClaimRefused::Unknown));
    }
    Ok(Ok(format!("{}/{}", found.id, found.filename)))
}

/// The public URL of a stored reference.
pub fn url(public_url: &str, reference: &str) -> String {
    format!("{public_url}/media/{reference}")
}

/// A claimed file by key, for serving.
pub async fn claimed(db: &impl ConnectionTrait, key: &str) -> Result<Option<file::Model>, DbErr> {
    file::Entity::find_by_id(key.to_owned())
        .filter(file::Column::Expires.is_null())
        .one(db)
        .await
}
