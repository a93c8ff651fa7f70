//! File answers of positions: an answer to a file question is an upload claimed as a
//! private file of the event and stored as `file://<key>/<name>`. Only private files of the
//! event are ever served or forgotten by a reference, so an answer text of another question
//! that looks like one reaches nothing. Clients see a URL of the API instead
//! (`orderpositions/{id}/answer/{question}/`), which serves the file to callers who may read
//! the order, and ticket layouts use image answers as `question_<identifier>` images
//! (`pdf_image/{key}/`).

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use serde_json::Value;

use crate::db::entities::{file, order_position, question};
use crate::domain::files;
use crate::domain::refusal::Refusal;

/// How a stored file answer begins: `<key>/<name>` follows.
pub const FILE_ANSWER: &str = "file://";

/// Endings of file names that ticket layouts take as images, as pretix's.
const IMAGE_ENDINGS: [&str; 4] = [".png", ".jpg", ".jpeg", ".gif"];

/// Prefix of the image keys of file questions in ticket layouts.
const IMAGE_KEY_PREFIX: &str = "question_";

/// The stored references (`<key>/<name>`) of a position's file answers.
pub fn references(answers: &Value) -> impl Iterator<Item = &str> {
    answers
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["answer"].as_str()?.strip_prefix(FILE_ANSWER))
}

/// The stored reference of the answer to `question`, when it is a file.
pub fn reference(answers: &Value, question: i64) -> Option<&str> {
    answers
        .as_array()?
        .iter()
        .find(|a| a["question"] == question)?["answer"]
        .as_str()?
        .strip_prefix(FILE_ANSWER)
}

/// A stored answer as views without the API's URL show it: a file answer by its file name
/// only, never its stored key.
pub fn without_key(answer: &Value) -> Value {
    let mut shown = answer.clone();
    if let Some(name) = answer["answer"]
        .as_str()
        .and_then(|a| a.strip_prefix(FILE_ANSWER))
        .and_then(|r| r.split_once('/'))
        .map(|(_, name)| name.to_owned())
    {
        shown["answer"] = Value::String(name);
    }
    shown
}

/// Whether a stored answer text is a file.
pub fn is_file(answer: &str) -> bool {
    answer.starts_with(FILE_ANSWER)
}

/// Where the API serves the file answer of a position to `question`.
pub fn url(public_url: &str, organizer: &str, event: &str, position: i64, question: i64) -> String {
    format!(
        "{public_url}/api/v1/organizers/{organizer}/events/{event}/orderpositions/{position}/answer/{question}/"
    )
}

/// The file of the position's answer to `question`: 404 when the answer is not a file.
pub async fn answer_file(
    db: &impl ConnectionTrait,
    event_id: i64,
    position: &order_position::Model,
    question: i64,
) -> Result<file::Model, Refusal> {
    let Some(reference) = reference(&position.answers, question) else {
        return Err(Refusal::not_found("Not found."));
    };
    files::private_file(db, event_id, reference)
        .await?
        .ok_or_else(|| Refusal::not_found("Not found."))
}

/// The image a ticket layout shows for `key` (`question_<identifier>` of a file question of
/// the event): the position's answer, else its base position's (an add-on's). 404 "Unknown
/// key" for a key no file question has, "No image available" when there is no image answer.
pub async fn layout_image(
    db: &impl ConnectionTrait,
    event_id: i64,
    position: &order_position::Model,
    key: &str,
) -> Result<file::Model, Refusal> {
    let unknown = || Refusal::not_found("Unknown key");
    let identifier = key.strip_prefix(IMAGE_KEY_PREFIX).ok_or_else(unknown)?;
    let q = question::Entity::find()
        .filter(question::Column::EventId.eq(event_id))
        .filter(question::Column::Identifier.eq(identifier))
        .filter(question::Column::Type.eq(crate::domain::questions::FILE))
        .one(db)
        .await?
        .ok_or_else(unknown)?;
    let base = match position.addon_to_id {
        Some(id) => order_position::Entity::find_by_id(id).one(db).await?,
        None => None,
    };
    let image = reference(&position.answers, q.id)
        .or_else(|| base.as_ref().and_then(|b| reference(&b.answers, q.id)))
        .filter(|r| {
            let name = r.to_ascii_lowercase();
            IMAGE_ENDINGS.iter().any(|e| name.ends_with(e))
        });
    let none = || Refusal::not_found("No image available");
    let reference = image.ok_or_else(none)?;
    files::private_file(db, event_id, reference)
        .await?
        .ok_or_else(none)
}
