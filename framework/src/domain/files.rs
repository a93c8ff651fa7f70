//! Uploaded files. An upload is kept for 24 hours for the caller who sent it; a resource
//! that takes it claims it. An item's picture is then served publicly under its unguessable
//! key; a file answer becomes a private file of its event ([`claim_private`]), served only
//! through the API.
//!
//! Only what some field can claim is taken: on the ticketing side (`/api/v1/upload`) the
//! media types of [`ACCEPTED_TYPES`], whose contents must start with the type's signature,
//! from callers holding one of [`CLAIMING_PERMISSIONS`]; on the talk side (`/api/upload/`)
//! the documents of [`DOCUMENT_TYPES`] under a file name with the type's extension, images
//! among them checked like pictures ([`check_document_name`], [`check_document_contents`]),
//! from user tokens that may write on some endpoint (as pretalx, whatever the user's teams),
//! claimed by talk-side fields with [`claim_for_user`].
//! Each caller (owner) may keep at most [`MAX_UNCLAIMED_FILES`] files and
//! [`MAX_UNCLAIMED_BYTES`] bytes unclaimed at a time, uploads of both sides together.
//!
//! Files the service makes for a caller on request (a batch of rendered tickets) are kept the
//! same 24 hours for that caller and what it asked for ([`keep_made`], [`made`]), under an
//! owner of their own, so that they can neither be claimed as uploads nor count as them.

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr,
    EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set, Statement,
};

use super::permissions::Permission;
use crate::db::begin_write;
use crate::db::entities::file;
use crate::domain::refusal::Refusal;

/// How long an unclaimed upload stays usable.
pub const UPLOAD_LIFETIME: Duration = Duration::hours(24);

/// Largest accepted upload, in bytes.
pub const MAX_SIZE: usize = 10 * 1024 * 1024;

/// How many unclaimed uploads one caller may keep at a time.
pub const MAX_UNCLAIMED_FILES: u64 = 100;

/// How many bytes of unclaimed uploads one caller may keep at a time.
pub const MAX_UNCLAIMED_BYTES: u64 = 100 * 1024 * 1024;

/// Media types an item's picture may have: images only.
pub const PICTURE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Media types a file answer to a question may have, as pretix takes them: PNG, JPEG and GIF
/// images, and PDF.
pub const ANSWER_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "application/pdf"];

/// Media types accepted for upload: those some field claims (pictures, file answers), since
/// an upload nothing can claim is only a way to store data.
pub const ACCEPTED_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
];

/// How the owner of a claimed file that is not public begins: file answers, owned by their
/// event (`private:<event id>`), served only through the API to callers who may read its
/// orders ([`private_file`]), never under `/media/`.
const PRIVATE_OWNER: &str = "private:";

/// The owner of an event's private files.
fn private_owner(event_id: i64) -> String {
    format!("{PRIVATE_OWNER}{event_id}")
}

/// Media types of talk-side uploads (`/api/upload/`), as pretalx takes them: the picture
/// types, BMP and TIFF images, PDF, office documents (Word, Excel, PowerPoint, RTF,
/// OpenDocument), plain text, CSV and ZIP archives. Speaker avatars and submission images
/// take only [`PICTURE_TYPES`]; resources and file answers take any of these.
pub const DOCUMENT_TYPES: [&str; 20] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/tiff",
    "application/pdf",
    "text/plain",
    "text/csv",
    "application/zip",
    "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/rtf",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation",
];

/// The write permissions of the fields that claim uploads (an item's picture needs
/// `can_change_items` for its event, a file answer `can_change_orders`, a layout's
/// background `can_change_event_settings`); an upload needs one of them.
pub const CLAIMING_PERMISSIONS: [Permission; 3] = [
    Permission::ChangeItems,
    Permission::ChangeOrders,
    Permission::ChangeEventSettings,
];

/// Longest stored file name, extension included.
pub const MAX_FILENAME_LEN: usize = 100;

/// Prefix of the file IDs clients send back.
const ID_PREFIX: &str = "file:";

/// Namespace of the PostgreSQL advisory locks serializing one owner's uploads (the first key
/// of `pg_advisory_xact_lock(int, int)`), so they cannot clash with other advisory locks.
const UPLOAD_LOCK_CLASS: i32 = 0x7570_6c64; // "upld"

/// A human name of an accepted media type, for messages.
pub fn type_name(content_type: &str) -> &'static str {
    match content_type {
        "image/png" => "PNG image",
        "image/jpeg" => "JPEG image",
        "image/gif" => "GIF image",
        "image/webp" => "WebP image",
        "image/bmp" => "BMP image",
        "image/tiff" => "TIFF image",
        _ => "file of an accepted type",
    }
}

/// The file name extensions of a media type, the usual one first; none for a type neither
/// side takes.
pub fn extensions(content_type: &str) -> &'static [&'static str] {
    match content_type {
        "image/png" => &["png"],
        "image/jpeg" => &["jpg", "jpeg"],
        "image/gif" => &["gif"],
        "image/webp" => &["webp"],
        "image/bmp" => &["bmp"],
        "image/tiff" => &["tif", "tiff"],
        "application/pdf" => &["pdf"],
        "text/plain" => &["txt"],
        "text/csv" => &["csv"],
        "application/zip" => &["zip"],
        "application/msword" => &["doc"],
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => &["docx"],
        "application/rtf" => &["rtf"],
        "application/vnd.ms-powerpoint" => &["ppt"],
        "application/vnd.openxmlformats-officedocument.presentationml.presentation" => &["pptx"],
        "application/vnd.ms-excel" => &["xls"],
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => &["xlsx"],
        "application/vnd.oasis.opendocument.text" => &["odt"],
        "application/vnd.oasis.opendocument.spreadsheet" => &["ods"],
        "application/vnd.oasis.opendocument.presentation" => &["odp"],
        _ => &[],
    }
}

/// The media type of a file sent without its own: generated API clients send every binary
/// body as this. Uploads then take the type of the file name's extension ([`upload_type`]).
pub const OCTET_STREAM: &str = "application/octet-stream";

/// The media type of an upload named `filename` sent as `content_type`: that type itself, or
/// for [`OCTET_STREAM`] the one of `types` whose extension the name ends in (`None` when
/// none does).
pub fn upload_type<'a>(
    content_type: &'a str,
    filename: &str,
    types: &[&'a str],
) -> Option<&'a str> {
    if content_type != OCTET_STREAM {
        return Some(content_type);
    }
    types
        .iter()
        .copied()
        .find(|&t| has_extension_of(filename, t))
}

/// Whether `filename` ends in an extension of `content_type` (in any case).
pub fn has_extension_of(filename: &str, content_type: &str) -> bool {
    filename.rsplit_once('.').is_some_and(|(_, ext)| {
        extensions(content_type).contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// Whether uploads of `content_type` must prove to be what the type says
/// ([`contents_match`]): images, which browsers render.
pub fn is_image(content_type: &str) -> bool {
    content_type.starts_with("image/")
}

/// Whether `data` starts with the signature ("magic bytes") of the image type
/// `content_type`, so that a file is what its declared type says; false for any other type.
pub fn contents_match(content_type: &str, data: &[u8]) -> bool {
    match content_type {
        "image/png" => data.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => data.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a"),
        "image/webp" => data.len() >= 12 && data.starts_with(b"RIFF") && &data[8..12] == b"WEBP",
        // A BMP file header is 14 bytes, its size field the file's length.
        "image/bmp" => data.len() >= 14 && data.starts_with(b"BM"),
        "image/tiff" => data.starts_with(b"II*\0") || data.starts_with(b"MM\0*"),
        "application/pdf" => data.starts_with(b"%PDF-"),
        _ => false,
    }
}

/// Why a talk-side upload named `filename` of type `content_type` is not taken, as a message
/// for the client; `None` when its type is one of [`DOCUMENT_TYPES`] and the name ends in an
/// extension of it. Checked before the contents are read ([`check_document_contents`]).
pub fn check_document_name(content_type: &str, filename: &str) -> Option<String> {
    if !DOCUMENT_TYPES.contains(&content_type) {
        return Some(format!(
            "Content type is not allowed: \"{content_type}\" is none of images (PNG, JPEG, \
             GIF, WebP, BMP, TIFF), PDF, office documents (Word, Excel, PowerPoint, RTF, \
             OpenDocument), text, CSV and ZIP."
        ));
    }
    if !has_extension_of(filename, content_type) {
        return Some(format!(
            "File name \"{filename}\" has an invalid extension for type \"{content_type}\"."
        ));
    }
    None
}

/// Why the contents of a talk-side upload of type `content_type` are not taken; `None` when
/// they are: an image must be what its type says ([`contents_match`]), other documents are
/// taken as they are (they are only ever served as downloads).
pub fn check_document_contents(content_type: &str, data: &[u8]) -> Option<String> {
    (is_image(content_type) && !contents_match(content_type, data)).then(|| {
        format!(
            "Upload a valid image: the file's contents are not a {} as its type \
             \"{content_type}\" says.",
            type_name(content_type)
        )
    })
}

/// `name` with every character but `[A-Za-z0-9._-]` replaced by `_` and without leading dots,
/// so that it is one harmless URL path segment and header value.
fn clean(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    mapped.trim_start_matches('.').to_owned()
}

/// `stem.ext` at most [`MAX_FILENAME_LEN`] characters long, shortening the stem; `file` for
/// an empty stem.
fn bounded(stem: &str, ext: &str) -> String {
    let room = MAX_FILENAME_LEN.saturating_sub(ext.len() + 1);
    // `stem` is ASCII (see `clean`), so any byte index is a character boundary.
    let stem = &stem[..stem.len().min(room)];
    let stem = if stem.is_empty() { "file" } else { stem };
    if ext.is_empty() {
        stem.to_owned()
    } else {
        format!("{stem}.{ext}")
    }
}

/// A safe file name for an upload named `name` of type `content_type`: only
/// `[A-Za-z0-9._-]`, at most [`MAX_FILENAME_LEN`] characters, ending in an extension of the
/// type (the sent one when it fits the type, else the usual one).
pub fn safe_filename(name: &str, content_type: &str) -> String {
    let cleaned = clean(name);
    let exts = extensions(content_type);
    match cleaned.rsplit_once('.') {
        Some((stem, ext)) if exts.contains(&ext.to_ascii_lowercase().as_str()) => {
            bounded(stem, &ext.to_ascii_lowercase())
        }
        _ => bounded(&cleaned, exts.first().copied().unwrap_or_default()),
    }
}

/// A safe form of a file name whose type is not at hand (stored references): cleaned like
/// [`safe_filename`], keeping the extension it has.
fn safe_segment(name: &str) -> String {
    let cleaned = clean(name);
    match cleaned.rsplit_once('.') {
        Some((stem, ext)) if !ext.is_empty() && ext.len() <= 10 => bounded(stem, ext),
        _ => bounded(&cleaned, ""),
    }
}

/// The owner of a user's talk-side uploads: the identity of their user tokens
/// (`Caller::identity`), whichever of them uploaded.
pub fn user_owner(user_id: i64) -> String {
    format!("user:{user_id}")
}

/// Why an upload was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadRefused {
    /// The owner's unclaimed uploads would go beyond [`MAX_UNCLAIMED_FILES`] or
    /// [`MAX_UNCLAIMED_BYTES`].
    OverLimit {
        /// Seconds until the owner's oldest unclaimed upload expires and frees its share.
        retry_after_secs: u64,
    },
}

/// Stores an upload of `owner` (the caller's identity) under a safe file name; returns the
/// file ID to send back, or why it was refused. The type and contents are the caller's to
/// check ([`ACCEPTED_TYPES`], [`contents_match`]).
///
/// The owner's unclaimed uploads are counted and the new one inserted in one transaction that
/// no other upload of the owner runs beside (`begin_write` on SQLite, an advisory lock per
/// owner on PostgreSQL), so concurrent uploads cannot go beyond the limits together.
pub async fn upload(
    db: &DatabaseConnection,
    owner: &str,
    filename: &str,
    content_type: &str,
    data: Vec<u8>,
) -> Result<Result<String, UploadRefused>, DbErr> {
    let key = new_key();
    let size = u64::try_from(data.len()).unwrap_or(u64::MAX);
    // Forget what nobody claimed in time, before and outside the transaction: it is no one's
    // share any more (the count below skips it), and deleting other owners' rows under this
    // owner's lock would only make uploads wait on each other.
    file::Entity::delete_many()
        .filter(file::Column::Expires.lt(crate::values::now()))
        .exec(db)
        .await?;
    let txn = begin_write(db).await?;
    if txn.get_database_backend() == DbBackend::Postgres {
        txn.execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            [UPLOAD_LOCK_CLASS.into(), owner.into()],
        ))
        .await?;
    }
    let now = crate::values::now();
    let unclaimed = || {
        file::Entity::find()
            .filter(file::Column::Owner.eq(owner))
            .filter(file::Column::Expires.gt(now))
    };
    let (count, bytes) = unclaimed()
        .select_only()
        .column_as(Expr::cust("COUNT(*)"), "files")
        .column_as(Expr::cust("COALESCE(SUM(LENGTH(data)), 0)"), "bytes")
        .into_tuple::<(i64, i64)>()
        .one(&txn)
        .await?
        .unwrap_or_default();
    let count = u64::try_from(count).unwrap_or_default();
    let bytes = u64::try_from(bytes).unwrap_or_default();
    if count >= MAX_UNCLAIMED_FILES || bytes.saturating_add(size) > MAX_UNCLAIMED_BYTES {
        let oldest = unclaimed()
            .select_only()
            .column(file::Column::Expires)
            .order_by_asc(file::Column::Expires)
            .into_tuple::<Option<DateTime<Utc>>>()
            .one(&txn)
            .await?
            .flatten();
        let retry_after_secs = oldest
            .map(|e| (e - now).num_seconds().max(1))
            .and_then(|s| u64::try_from(s).ok())
            .unwrap_or(1);
        return Ok(Err(UploadRefused::OverLimit { retry_after_secs }));
    }
    file::ActiveModel {
        id: Set(key.clone()),
        owner: Set(owner.to_owned()),
        filename: Set(safe_filename(filename, content_type)),
        content_type: Set(content_type.to_owned()),
        data: Set(data),
        created: Set(now),
        expires: Set(Some(now + UPLOAD_LIFETIME)),
    }
    .insert(&txn)
    .await?;
    crate::db::commit(txn).await?;
    Ok(Ok(format!("{ID_PREFIX}{key}")))
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
    let reference = match unclaimed(db, owner, file_id, accepted).await? {
        Ok(reference) => reference,
        refused => return Ok(refused),
    };
    let claimed = file::Entity::update_many()
        .col_expr(file::Column::Expires, Expr::value(None::<DateTime<Utc>>))
        .filter(file::Column::Id.eq(file_key(&reference)))
        .filter(file::Column::Owner.eq(owner))
        .filter(file::Column::Expires.gt(crate::values::now()))
        .exec(db)
        .await?;
    if claimed.rows_affected == 0 {
        return Ok(Err(ClaimRefused::Unknown));
    }
    Ok(Ok(reference))
}

/// Claims a talk-side upload for the field `field` of an object being written: `file_id`
/// (`file:<key>`, as `POST /api/upload/` answered) must name an unexpired, unused upload of
/// the user `user_id` whose type is one of `accepted` (e.g. [`PICTURE_TYPES`] for an avatar,
/// [`DOCUMENT_TYPES`] for a resource). Gives the stored reference (`<key>/<file name>`, see
/// [`url`]); 400 on `field` otherwise, when the file is unknown, expired, used already,
/// someone else's or of another type (which leaves it unused). Call it in the transaction
/// that writes the object, so that a failed write leaves the upload unused.
pub async fn claim_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
    field: &str,
    file_id: &str,
    accepted: &[&str],
) -> Result<String, Refusal> {
    match claim(db, &user_owner(user_id), file_id, accepted).await? {
        Ok(reference) => Ok(reference),
        Err(ClaimRefused::Unknown) => Err(Refusal::field(
            field,
            "No such file: uploads are usable once, for 24 hours, by the user who uploaded them.",
        )),
        Err(ClaimRefused::WrongType) => Err(Refusal::field(
            field,
            format!(
                "This field takes files of these types only: {}.",
                accepted.join(", ")
            ),
        )),
    }
}

/// Sets the file of a talk-side field (a speaker's avatar, a submission's image) as a write
/// sends it: `sent` is an upload's ID to claim for the user ([`claim_for_user`]) or `None`
/// to remove the file. The file `current` held before is forgotten ([`forget`]) and
/// `current` holds the new reference. Call it in the write's transaction.
pub async fn replace_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
    field: &str,
    sent: Option<&str>,
    current: &mut Option<String>,
    accepted: &[&str],
) -> Result<(), Refusal> {
    let new = match sent {
        Some(file_id) => Some(claim_for_user(db, user_id, field, file_id, accepted).await?),
        None => None,
    };
    let old = std::mem::replace(current, new);
    forget(db, old.as_slice()).await?;
    Ok(())
}

/// A new, unguessable file key: 128 random bits in hex.
fn new_key() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The owner of files made for `caller` (an identity) for `purpose`.
fn made_owner(purpose: &str, caller: &str) -> String {
    format!("made:{purpose}:{caller}")
}

/// Keeps a file made for `caller` (an identity) for `purpose` for [`UPLOAD_LIFETIME`];
/// returns its key, for [`made`].
pub async fn keep_made(
    db: &impl ConnectionTrait,
    (purpose, caller): (&str, &str),
    filename: &str,
    content_type: &str,
    data: Vec<u8>,
) -> Result<String, DbErr> {
    let now = crate::values::now();
    file::Entity::delete_many()
        .filter(file::Column::Expires.lt(now))
        .exec(db)
        .await?;
    let key = new_key();
    file::ActiveModel {
        id: Set(key.clone()),
        owner: Set(made_owner(purpose, caller)),
        filename: Set(filename.to_owned()),
        content_type: Set(content_type.to_owned()),
        data: Set(data),
        created: Set(now),
        expires: Set(Some(now + UPLOAD_LIFETIME)),
    }
    .insert(db)
    .await?;
    Ok(key)
}

/// A file made for `caller` for `purpose` by its key, while it is kept; none for anybody
/// else's, another purpose's or an unknown key.
pub async fn made(
    db: &impl ConnectionTrait,
    (purpose, caller): (&str, &str),
    key: &str,
) -> Result<Option<file::Model>, DbErr> {
    file::Entity::find_by_id(key.to_owned())
        .filter(file::Column::Owner.eq(made_owner(purpose, caller)))
        .filter(file::Column::Expires.gt(crate::values::now()))
        .one(db)
        .await
}

/// The key of a stored reference (`<key>/<file name>`).
pub fn file_key(reference: &str) -> &str {
    reference.split('/').next().unwrap_or(reference)
}

/// Forgets claimed files no longer referred to, by their stored references.
pub async fn forget(db: &impl ConnectionTrait, references: &[String]) -> Result<(), DbErr> {
    for reference in references {
        crate::db::execute(
            db,
            "DELETE FROM files WHERE id = $1",
            [file_key(reference).into()],
        )
        .await?;
    }
    Ok(())
}

/// The public URL of a stored reference (`<key>/<file name>`). The name is made safe here
/// too, for references stored before names were made safe at upload.
pub fn url(public_url: &str, reference: &str) -> String {
    match reference.split_once('/') {
        Some((key, name)) => format!("{public_url}/media/{key}/{}", safe_segment(name)),
        None => format!("{public_url}/media/{reference}"),
    }
}

/// A claimed public file by key, for serving under `/media/`.
pub async fn claimed(db: &impl ConnectionTrait, key: &str) -> Result<Option<file::Model>, DbErr> {
    file::Entity::find_by_id(key.to_owned())
        .filter(file::Column::Expires.is_null())
        .filter(file::Column::Owner.not_like(format!("{PRIVATE_OWNER}%")))
        .one(db)
        .await
}

/// The stored reference (`<key>/<file name>`) of an unexpired, unclaimed upload of `owner`
/// by its file ID, when its type is one of `accepted`; nothing is claimed (see [`claim`],
/// [`claim_private`]).
pub async fn unclaimed(
    db: &impl ConnectionTrait,
    owner: &str,
    file_id: &str,
    accepted: &[&str],
) -> Result<Result<String, ClaimRefused>, DbErr> {
    let Some(key) = file_id.strip_prefix(ID_PREFIX) else {
        return Ok(Err(ClaimRefused::Unknown));
    };
    let Some(found) = file::Entity::find_by_id(key.to_owned())
        .filter(file::Column::Owner.eq(owner))
        .filter(file::Column::Expires.gt(crate::values::now()))
        .one(db)
        .await?
    else {
        return Ok(Err(ClaimRefused::Unknown));
    };
    if !accepted.contains(&found.content_type.as_str()) {
        return Ok(Err(ClaimRefused::WrongType));
    }
    let name = safe_filename(&found.filename, &found.content_type);
    Ok(Ok(format!("{}/{name}", found.id)))
}

/// Claims uploads of `owner` by their distinct references ([`unclaimed`]) as private files of
/// the event; false when one of them is no longer an unclaimed upload of the owner (claimed
/// meanwhile), and then the caller's transaction must roll back.
pub async fn claim_private(
    db: &impl ConnectionTrait,
    owner: &str,
    event_id: i64,
    references: &[String],
) -> Result<bool, DbErr> {
    if references.is_empty() {
        return Ok(true);
    }
    let keys: Vec<&str> = references.iter().map(|r| file_key(r)).collect();
    let claimed = file::Entity::update_many()
        .col_expr(file::Column::Expires, Expr::value(None::<DateTime<Utc>>))
        .col_expr(file::Column::Owner, Expr::value(private_owner(event_id)))
        .filter(file::Column::Id.is_in(keys.iter().copied()))
        .filter(file::Column::Owner.eq(owner))
        .filter(file::Column::Expires.gt(crate::values::now()))
        .exec(db)
        .await?;
    Ok(claimed.rows_affected == keys.len() as u64)
}

/// A private file of the event by its stored reference, for serving to a caller the rules
/// let read it.
pub async fn private_file(
    db: &impl ConnectionTrait,
    event_id: i64,
    reference: &str,
) -> Result<Option<file::Model>, DbErr> {
    file::Entity::find_by_id(file_key(reference).to_owned())
        .filter(file::Column::Owner.eq(private_owner(event_id)))
        .filter(file::Column::Expires.is_null())
        .one(db)
        .await
}

/// Forgets private files of the event by their stored references; any other file named
/// stays.
pub async fn forget_private(
    db: &impl ConnectionTrait,
    event_id: i64,
    references: &[String],
) -> Result<(), DbErr> {
    if references.is_empty() {
        return Ok(());
    }
    file::Entity::delete_many()
        .filter(file::Column::Id.is_in(references.iter().map(|r| file_key(r))))
        .filter(file::Column::Owner.eq(private_owner(event_id)))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{
        DOCUMENT_TYPES, check_document_contents, check_document_name, contents_match, extensions,
        safe_filename, url,
    };

    #[test]
    fn talk_documents_need_a_listed_type_and_its_extension() {
        assert_eq!(check_document_name("application/pdf", "Talk.PDF"), None);
        assert_eq!(check_document_name("image/tiff", "scan.tif"), None);
        assert!(check_document_name("application/pdf", "talk.png").is_some());
        assert!(check_document_name("application/pdf", "pdf").is_some());
        assert!(check_document_name("text/html", "page.html").is_some());
        assert!(check_document_name("image/svg+xml", "logo.svg").is_some());
        for t in DOCUMENT_TYPES {
            assert!(!extensions(t).is_empty(), "{t}");
        }
    }

    #[test]
    fn only_images_must_prove_their_type() {
        assert_eq!(
            check_document_contents("application/pdf", b"anything"),
            None
        );
        assert_eq!(
            check_document_contents("image/png", b"\x89PNG\r\n\x1a\n"),
            None
        );
        assert!(check_document_contents("image/png", b"<svg/>").is_some());
        assert!(contents_match("image/bmp", b"BM\0\0\0\0\0\0\0\0\0\0\0\0"));
        assert!(!contents_match("image/bmp", b"BM"));
        assert!(contents_match("image/tiff", b"II*\0rest"));
        assert!(contents_match("image/tiff", b"MM\0*rest"));
    }

    #[test]
    fn a_safe_file_name_keeps_only_harmless_characters_and_the_types_extension() {
        assert_eq!(safe_filename("logo.png", "image/png"), "logo.png");
        assert_eq!(safe_filename("<script>.png", "image/png"), "_script_.png");
        assert_eq!(safe_filename("a b%2F.png", "image/png"), "a_b_2F.png");
        assert_eq!(safe_filename("photo.JPEG", "image/jpeg"), "photo.jpeg");
        assert_eq!(safe_filename("page.html", "image/gif"), "page.html.gif");
        assert_eq!(safe_filename("..", "image/webp"), "file.webp");
        assert_eq!(safe_filename(".htaccess", "image/png"), "htaccess.png");
        assert_eq!(safe_filename("é.png", "image/png"), "_.png");
        let long = safe_filename(&format!("{}.png", "x".repeat(300)), "image/png");
        assert_eq!(long.len(), 100);
        assert!(long.ends_with(".png"));
    }

    #[test]
    fn stored_references_get_safe_urls() {
        assert_eq!(
            url("http://t", "abc/logo.png"),
            "http://t/media/abc/logo.png"
        );
        assert_eq!(
            url("http://t", "abc/<b> x.png"),
            "http://t/media/abc/_b__x.png"
        );
    }

    #[test]
    fn contents_must_start_with_the_signature_of_their_type() {
        assert!(contents_match("image/png", b"\x89PNG\r\n\x1a\nrest"));
        assert!(!contents_match("image/png", b"<html>"));
        assert!(contents_match("image/jpeg", &[0xff, 0xd8, 0xff, 0xe0]));
        assert!(contents_match("image/gif", b"GIF89a..."));
        assert!(contents_match("image/webp", b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(!contents_match("image/webp", b"RIFF\0\0\0\0WAVEfmt "));
        assert!(contents_match("application/pdf", b"%PDF-1.4"));
        assert!(!contents_match("application/pdf", b"<html>%PDF-"));
        assert!(!contents_match("text/html", b"<html>"));
    }
}
