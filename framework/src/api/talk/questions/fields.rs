//! A question's and an option's stored fields, checked and written in one transaction.

use chrono::{DateTime, NaiveDate, Utc};
use rand::Rng;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::str::FromStr;

use super::wire::{
    KIND, NestedOptionWrite, OPTION_KIND, OptionOut, QUESTION_COLUMNS, QuestionFields, QuestionOut,
    QuestionPatch, QuestionWrite, Required, Variant, links,
};
use super::{MAX_OPTIONS, OBJECT, OPTION_OBJECT};
use crate::api::talk::context::{Ctx, keys_in};
use crate::api::talk::expand::Expand;
use crate::api::talk::shape::Shaped;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::log::{self as talk_log, Change};
use crate::domain::talk::questions::visible;
use crate::http::{ApiError, FieldErrors, I18nString, patched};
use crate::state::AppState;

/// The stored fields of a question.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fields {
    pub(super) identifier: String,
    pub(super) question: Value,
    pub(super) help_text: Value,
    pub(super) default_answer: Option<String>,
    pub(super) variant: String,
    pub(super) target: String,
    pub(super) deadline: Option<DateTime<Utc>>,
    pub(super) freeze_after: Option<DateTime<Utc>>,
    pub(super) question_required: String,
    pub(super) position: i32,
    pub(super) active: bool,
    pub(super) is_public: bool,
    pub(super) contains_personal_data: bool,
    pub(super) is_visible_to_reviewers: bool,
    pub(super) min_length: Option<i32>,
    pub(super) max_length: Option<i32>,
    pub(super) min_number: Option<String>,
    pub(super) max_number: Option<String>,
    pub(super) min_options: Option<i32>,
    pub(super) max_options: Option<i32>,
    pub(super) min_date: Option<NaiveDate>,
    pub(super) max_date: Option<NaiveDate>,
    pub(super) min_datetime: Option<DateTime<Utc>>,
    pub(super) max_datetime: Option<DateTime<Utc>>,
    pub(super) icon: Option<String>,
    pub(super) tracks: Vec<i64>,
    pub(super) submission_types: Vec<i64>,
}

/// The columns of [`Fields`] in the order of [`Fields::values`].
pub(super) const WRITE_COLUMNS: [&str; 25] = [
    "identifier",
    "question",
    "help_text",
    "default_answer",
    "variant",
    "target",
    "deadline",
    "freeze_after",
    "question_required",
    "position",
    "active",
    "is_public",
    "contains_personal_data",
    "is_visible_to_reviewers",
    "min_length",
    "max_length",
    "min_number",
    "max_number",
    "min_options",
    "max_options",
    "min_date",
    "max_date",
    "min_datetime",
    "max_datetime",
    "icon",
];

/// A JSON value for a nullable JSON column: SQL NULL for null.
pub(super) fn json_column(v: &Value) -> sea_orm::Value {
    if v.is_null() {
        sea_orm::Value::Json(None)
    } else {
        v.clone().into()
    }
}

impl Fields {
    pub(super) fn new(question: Value) -> Self {
        Self {
            identifier: String::new(),
            question,
            help_text: Value::Null,
            default_answer: None,
            variant: "string".into(),
            target: "submission".into(),
            deadline: None,
            freeze_after: None,
            question_required: "optional".into(),
            position: 0,
            active: true,
            is_public: false,
            contains_personal_data: true,
            is_visible_to_reviewers: true,
            min_length: None,
            max_length: None,
            min_number: None,
            max_number: None,
            min_options: None,
            max_options: None,
            min_date: None,
            max_date: None,
            min_datetime: None,
            max_datetime: None,
            icon: None,
            tracks: Vec::new(),
            submission_types: Vec::new(),
        }
    }

    /// A question as POST or PUT gives it: the defaults, changed by what it sends;
    /// `target` is the stored target on PUT.
    pub(super) fn from_write(
        body: QuestionWrite,
        target: Option<&str>,
    ) -> (Self, Option<Vec<NestedOptionWrite>>) {
        let (mut f, options) = Self::new(body.question.to_stored()).change(body.fields);
        if let Some(stored) = target {
            f.target = stored.into();
        }
        (f, options)
    }

    /// The stored question changed as a PATCH says.
    pub(super) fn patch(mut self, body: QuestionPatch) -> (Self, Option<Vec<NestedOptionWrite>>) {
        if let Some(q) = body.question {
            self.question = q.to_stored();
        }
        self.change(body.fields)
    }

    /// These fields changed where `body` sends a value.
    fn change(mut self, body: QuestionFields) -> (Self, Option<Vec<NestedOptionWrite>>) {
        if let Some(i) = body.identifier {
            self.identifier = i;
        }
        if let Some(h) = patched(body.help_text) {
            self.help_text = h.map_or(Value::Null, |h| h.to_stored());
        }
        if let Some(v) = body.variant {
            self.variant = v.as_str().into();
        }
        if let Some(t) = body.target {
            self.target = t.as_str().into();
        }
        if let Some(r) = body.question_required {
            self.question_required = r.as_str().into();
        }
        self.position = body.position.unwrap_or(self.position);
        macro_rules! set {
            ($($field:ident),*) => {
                $(if let Some(v) = patched(body.$field) {
                    self.$field = v;
                })*
            };
        }
        set!(
            default_answer,
            deadline,
            freeze_after,
            min_length,
            max_length,
            min_number,
            max_number,
            min_options,
            max_options,
            min_date,
            max_date,
            min_datetime,
            max_datetime
        );
        if let Some(i) = patched(body.icon) {
            self.icon = i.map(|i| i.as_str().to_owned());
        }
        self.active = body.active.unwrap_or(self.active);
        self.is_public = body.is_public.unwrap_or(self.is_public);
        self.contains_personal_data = body
            .contains_personal_data
            .unwrap_or(self.contains_personal_data);
        self.is_visible_to_reviewers = body
            .is_visible_to_reviewers
            .unwrap_or(self.is_visible_to_reviewers);
        if let Some(t) = body.tracks {
            self.tracks = t;
        }
        if let Some(t) = body.submission_types {
            self.submission_types = t;
        }
        (self, body.options)
    }

    pub(super) fn values(&self) -> Vec<sea_orm::Value> {
        vec![
            self.identifier.clone().into(),
            self.question.clone().into(),
            json_column(&self.help_text),
            self.default_answer.clone().into(),
            self.variant.clone().into(),
            self.target.clone().into(),
            self.deadline.into(),
            self.freeze_after.into(),
            self.question_required.clone().into(),
            self.position.into(),
            self.active.into(),
            self.is_public.into(),
            self.contains_personal_data.into(),
            self.is_visible_to_reviewers.into(),
            self.min_length.into(),
            self.max_length.into(),
            self.min_number.clone().into(),
            self.max_number.clone().into(),
            self.min_options.into(),
            self.max_options.into(),
            self.min_date.into(),
            self.max_date.into(),
            self.min_datetime.into(),
            self.max_datetime.into(),
            self.icon.clone().into(),
        ]
    }

    /// The fields as the log records them.
    pub(super) fn data(&self) -> Value {
        json!({
            "identifier": self.identifier,
            "question": self.question,
            "help_text": self.help_text,
            "default_answer": self.default_answer,
            "variant": self.variant,
            "target": self.target,
            "deadline": self.deadline,
            "freeze_after": self.freeze_after,
            "question_required": self.question_required,
            "position": self.position,
            "active": self.active,
            "is_public": self.is_public,
            "contains_personal_data": self.contains_personal_data,
            "is_visible_to_reviewers": self.is_visible_to_reviewers,
            "min_length": self.min_length,
            "max_length": self.max_length,
            "min_number": self.min_number,
            "max_number": self.max_number,
            "min_options": self.min_options,
            "max_options": self.max_options,
            "min_date": self.min_date,
            "max_date": self.max_date,
            "min_datetime": self.min_datetime,
            "max_datetime": self.max_datetime,
            "icon": self.icon,
            "tracks": self.tracks,
            "submission_types": self.submission_types,
        })
    }

    /// The checks that need no database: a label, decimal bounds, a deadline where the
    /// answer is required after it, option bounds in order.
    pub(super) fn check(&mut self, option_count: Option<usize>) -> Result<(), ApiError> {
        let mut errors = FieldErrors::default();
        if !is_identifier(&self.identifier) {
            errors.push("identifier", IDENTIFIER_RULE);
        }
        if I18nString::from_stored(&self.question)
            .0
            .iter()
            .all(|(_, t)| t.trim().is_empty())
        {
            errors.push("question", "This field is required.");
        }
        for (field, value) in [
            ("min_number", &mut self.min_number),
            ("max_number", &mut self.max_number),
        ] {
            if let Some(text) = value.as_deref() {
                match Decimal::from_str(text) {
                    Ok(d) if is_bound(text) => *value = Some(d.normalize().to_string()),
                    _ => errors.push(
                        field,
                        "A valid number is required: at most 10 digits and 6 decimal places.",
                    ),
                }
            }
        }
        if self.question_required == Required::AfterDeadline.as_str() && self.deadline.is_none() {
            errors.push(
                "deadline",
                "Please select a deadline after which the field should become mandatory.",
            );
        }
        if let (Some(min), Some(max)) = (self.min_options, self.max_options)
            && min > max
        {
            errors.push(
                "min_options",
                "Minimum number of options cannot be greater than maximum number of options.",
            );
        }
        if let (Some(min), Some(count)) = (self.min_options, option_count)
            && self.variant == Variant::MultipleChoice.as_str()
            && count > 0
            && usize::try_from(min).unwrap_or(0) > count
        {
            errors.push(
                "min_options",
                format!("This custom field only has {count} options, so it cannot require {min} of them."),
            );
        }
        self.tracks.sort_unstable();
        self.tracks.dedup();
        self.submission_types.sort_unstable();
        self.submission_types.dedup();
        Ok(errors.into_result()?)
    }
}

/// The stored question `id` of the event, if the caller sees it; 404 otherwise.
pub(super) async fn stored(ctx: &Ctx<'_>, id: i64) -> Result<Fields, ApiError> {
    let sql = format!(
        "SELECT {QUESTION_COLUMNS} FROM talk_questions q WHERE q.id = $1 AND q.event_id = $2 AND {}",
        visible(ctx.role())
    );
    let r = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    let [tracks, submission_types, _] = links(ctx, &[id]).await?.remove(&id).unwrap_or_default();
    Ok(Fields {
        identifier: r.try_get("", "identifier")?,
        question: r.try_get("", "question")?,
        help_text: r
            .try_get::<Option<Value>>("", "help_text")?
            .unwrap_or(Value::Null),
        default_answer: r.try_get("", "default_answer")?,
        variant: r.try_get("", "variant")?,
        target: r.try_get("", "target")?,
        deadline: r.try_get("", "deadline")?,
        freeze_after: r.try_get("", "freeze_after")?,
        question_required: r.try_get("", "question_required")?,
        position: r.try_get("", "position")?,
        active: r.try_get("", "active")?,
        is_public: r.try_get("", "is_public")?,
        contains_personal_data: r.try_get("", "contains_personal_data")?,
        is_visible_to_reviewers: r.try_get("", "is_visible_to_reviewers")?,
        min_length: r.try_get("", "min_length")?,
        max_length: r.try_get("", "max_length")?,
        min_number: r.try_get("", "min_number")?,
        max_number: r.try_get("", "max_number")?,
        min_options: r.try_get("", "min_options")?,
        max_options: r.try_get("", "max_options")?,
        min_date: r.try_get("", "min_date")?,
        max_date: r.try_get("", "max_date")?,
        min_datetime: r.try_get("", "min_datetime")?,
        max_datetime: r.try_get("", "max_datetime")?,
        icon: r.try_get("", "icon")?,
        tracks,
        submission_types,
    })
}

/// What an identifier may hold.
pub(super) const IDENTIFIER_RULE: &str =
    "The identifier may only contain letters, numbers, dots, dashes, and underscores.";

/// Whether `text` is an identifier as given (empty for a made-up one).
pub(super) fn is_identifier(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// Whether `text` is a number bound as pretalx stores them: at most 10 digits before the
/// point and 6 after.
pub(super) fn is_bound(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    whole.len() <= 10
        && fraction.len() <= 6
        && !(whole.is_empty() && fraction.is_empty())
        && whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
}

/// Characters of made-up identifiers: no look-alikes.
pub(super) const CODE_CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ3789";

/// A made-up identifier of eight characters.
pub(super) fn made_up_identifier() -> String {
    let mut rng = rand::rng();
    (0..8)
        .map(|_| char::from(CODE_CHARS[rng.random_range(0..CODE_CHARS.len())]))
        .collect()
}

/// An identifier for a new row among `taken` (compared case-insensitively): `wanted` when
/// given, else a made-up one. `None` when `wanted` is taken.
pub(super) fn identifier_among(wanted: &str, taken: &[String]) -> Option<String> {
    let is_taken = |c: &str| taken.iter().any(|t| t.eq_ignore_ascii_case(c));
    if !wanted.is_empty() {
        return (!is_taken(wanted)).then(|| wanted.to_owned());
    }
    loop {
        let code = made_up_identifier();
        if !is_taken(&code) {
            return Some(code);
        }
    }
}

/// The IDs among `ids` that are not rows of `table` in the event, as a 400 on `field`.
pub(super) async fn check_event_ids(
    ctx: &Ctx<'_>,
    table: &str,
    field: &str,
    ids: &[i64],
) -> Result<(), ApiError> {
    if ids.is_empty() {
        return Ok(());
    }
    let keys: Vec<Value> = ids.iter().map(|i| Value::from(*i)).collect();
    let (set, mut values) = keys_in(&keys);
    values.push(ctx.event_id().into());
    let sql = format!(
        "SELECT id FROM {table} WHERE id IN {set} AND event_id = ${}",
        values.len()
    );
    let found: Vec<i64> = ctx
        .rows(&sql, values)
        .await?
        .iter()
        .map(|r| r.try_get::<i64>("", "id"))
        .collect::<Result<_, _>>()?;
    match ids.iter().find(|i| !found.contains(i)) {
        Some(missing) => Err(ApiError::field(
            field,
            format!("Invalid pk \"{missing}\" - object does not exist."),
        )),
        None => Ok(()),
    }
}

/// Replaces the options of question `id` by `options`, with made-up identifiers.
pub(super) async fn replace_options(
    txn: &sea_orm::DatabaseTransaction,
    id: i64,
    options: &[NestedOptionWrite],
) -> Result<(), ApiError> {
    crate::db::execute(
        txn,
        "DELETE FROM talk_question_options WHERE question_id = $1",
        [id.into()],
    )
    .await?;
    let mut taken: Vec<String> = Vec::with_capacity(options.len());
    for option in options {
        let identifier = identifier_among("", &taken).unwrap_or_else(made_up_identifier);
        taken.push(identifier.clone());
        crate::db::execute(
            txn,
            "INSERT INTO talk_question_options (question_id, answer, position, identifier) \
             VALUES ($1, $2, $3, $4)",
            [
                id.into(),
                option.answer.to_stored().into(),
                option.position.unwrap_or(0).into(),
                identifier.into(),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Writes a question (new when `id` is `None`), its links, its options when given, and its
/// log entry in one transaction, and gives it as the API shows it.
pub(super) async fn save(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    mut f: Fields,
    options: Option<Vec<NestedOptionWrite>>,
    action: &str,
) -> Result<Shaped<QuestionOut>, ApiError> {
    if options.as_ref().is_some_and(|o| o.len() > MAX_OPTIONS) {
        return Err(ApiError::field(
            "options",
            format!("At most {MAX_OPTIONS} options."),
        ));
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let tctx = ctx.within(&txn);
    let option_count = match (&options, id) {
        (Some(o), _) => Some(o.len()),
        (None, Some(id)) => {
            let rows = tctx
                .rows(
                    "SELECT COUNT(*) AS n FROM talk_question_options WHERE question_id = $1",
                    vec![id.into()],
                )
                .await?;
            let n: i64 = rows
                .first()
                .map(|r| r.try_get("", "n"))
                .transpose()?
                .unwrap_or(0);
            Some(usize::try_from(n).unwrap_or(0))
        }
        (None, None) => None,
    };
    f.check(option_count)?;
    check_event_ids(&tctx, "talk_tracks", "tracks", &f.tracks).await?;
    check_event_ids(
        &tctx,
        "talk_submission_types",
        "submission_types",
        &f.submission_types,
    )
    .await?;
    let taken: Vec<String> = tctx
        .rows(
            "SELECT identifier FROM talk_questions WHERE event_id = $1 AND id <> $2",
            vec![ev.event.id.into(), id.unwrap_or(0).into()],
        )
        .await?
        .iter()
        .map(|r| r.try_get::<String>("", "identifier"))
        .collect::<Result<_, _>>()?;
    f.identifier = identifier_among(&f.identifier, &taken).ok_or_else(|| {
        ApiError::field(
            "identifier",
            "This identifier is already used for a different question.",
        )
    })?;
    let mut values = vec![ev.event.id.into()];
    values.extend(f.values());
    let id = match id {
        Some(id) => {
            let sets: Vec<String> = WRITE_COLUMNS
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c} = ${}", i + 2))
                .collect();
            values.push(id.into());
            let sql = format!(
                "UPDATE talk_questions SET {} WHERE event_id = $1 AND id = ${}",
                sets.join(", "),
                values.len()
            );
            crate::db::execute(&txn, &sql, values).await?;
            id
        }
        None => {
            let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "INSERT INTO talk_questions (event_id, {}) VALUES ({}) RETURNING id",
                WRITE_COLUMNS.join(", "),
                placeholders.join(", ")
            );
            crate::db::insert_returning_id(&txn, &sql, values).await?
        }
    };
    for (table, column, ids) in [
        ("talk_question_tracks", "track_id", &f.tracks),
        (
            "talk_question_types",
            "submission_type_id",
            &f.submission_types,
        ),
    ] {
        crate::db::execute(
            &txn,
            &format!("DELETE FROM {table} WHERE question_id = $1"),
            [id.into()],
        )
        .await?;
        for linked in ids {
            crate::db::execute(
                &txn,
                &format!("INSERT INTO {table} (question_id, {column}) VALUES ($1, $2)"),
                [id.into(), (*linked).into()],
            )
            .await?;
        }
    }
    let mut data = f.data();
    if let Some(options) = &options {
        replace_options(&txn, id, options).await?;
        data["options"] = options.iter().map(|o| o.answer.to_stored()).collect();
    }
    talk_log::write(&txn, Change::new(ev, OBJECT, id, action, data)).await?;
    let out = tctx.one(&KIND, id.into(), &Expand::default()).await?;
    crate::db::commit(txn).await?;
    Ok(out)
}

/// The stored fields of an option.
pub(super) struct OptionFields {
    pub(super) question: i64,
    pub(super) answer: Value,
    pub(super) position: i32,
    pub(super) identifier: String,
}

/// The stored option `id` of a visible choice question of the event; 404 otherwise.
pub(super) async fn stored_option(ctx: &Ctx<'_>, id: i64) -> Result<OptionFields, ApiError> {
    let sql = format!(
        "SELECT o.question_id, o.answer, o.position, o.identifier \
         FROM talk_question_options o JOIN talk_questions q ON q.id = o.question_id \
         WHERE o.id = $1 AND q.event_id = $2 AND q.variant IN ('choices', 'multiple_choice') AND {}",
        visible(ctx.role())
    );
    let r = ctx
        .rows(&sql, vec![id.into(), ctx.event_id().into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(OptionFields {
        question: r.try_get("", "question_id")?,
        answer: r.try_get("", "answer")?,
        position: r.try_get("", "position")?,
        identifier: r.try_get("", "identifier")?,
    })
}

/// Writes an option (new when `id` is `None`) and its log entry in one transaction, and
/// gives it as the API shows it.
pub(super) async fn save_option(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    mut f: OptionFields,
) -> Result<Shaped<OptionOut>, ApiError> {
    if I18nString::from_stored(&f.answer)
        .0
        .iter()
        .all(|(_, t)| t.trim().is_empty())
    {
        return Err(ApiError::field("answer", "This field is required."));
    }
    if !is_identifier(&f.identifier) {
        return Err(ApiError::field("identifier", IDENTIFIER_RULE));
    }
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let tctx = ctx.within(&txn);
    let choice = tctx
        .rows(
            "SELECT id FROM talk_questions WHERE id = $1 AND event_id = $2 \
             AND variant IN ('choices', 'multiple_choice')",
            vec![f.question.into(), ev.event.id.into()],
        )
        .await?;
    if choice.is_empty() {
        return Err(ApiError::field(
            "question",
            format!("Invalid pk \"{}\" - object does not exist.", f.question),
        ));
    }
    let taken: Vec<String> = tctx
        .rows(
            "SELECT identifier FROM talk_question_options WHERE question_id = $1 AND id <> $2",
            vec![f.question.into(), id.unwrap_or(0).into()],
        )
        .await?
        .iter()
        .map(|r| r.try_get::<String>("", "identifier"))
        .collect::<Result<_, _>>()?;
    f.identifier = identifier_among(&f.identifier, &taken).ok_or_else(|| {
        ApiError::field(
            "identifier",
            "This identifier is already used for a different option.",
        )
    })?;
    let data = json!({
        "question": f.question, "answer": f.answer, "position": f.position, "identifier": f.identifier,
    });
    let (id, action) = match id {
        Some(id) => {
            crate::db::execute(
                &txn,
                "UPDATE talk_question_options SET answer = $1, position = $2, identifier = $3 \
                 WHERE id = $4",
                [
                    f.answer.into(),
                    f.position.into(),
                    f.identifier.into(),
                    id.into(),
                ],
            )
            .await?;
            (id, "update")
        }
        None => (
            crate::db::insert_returning_id(
                &txn,
                "INSERT INTO talk_question_options (question_id, answer, position, identifier) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                [
                    f.question.into(),
                    f.answer.into(),
                    f.position.into(),
                    f.identifier.into(),
                ],
            )
            .await?,
            "create",
        ),
    };
    talk_log::write(&txn, Change::new(ev, OPTION_OBJECT, id, action, data)).await?;
    let out = tctx
        .one(&OPTION_KIND, id.into(), &Expand::default())
        .await?;
    crate::db::commit(txn).await?;
    Ok(out)
}
