//! Users: people who sign in with an email address and a password, members of teams.
//!
//! Emails are stored trimmed and lower-cased, so lookups are case-insensitive. Passwords are
//! stored as argon2id hashes; hashing and verifying are slow on purpose, so the async
//! functions here run them on the blocking pool.

use std::sync::{Arc, LazyLock};

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult,
    QueryFilter, Set, Statement,
};

use tokio::sync::Semaphore;

use super::login_failures::{self, Verdict};
use super::teams;
use crate::db::entities::{team, user};
use crate::domain::grants::{Caller, CallerKind, EventScope, Grant, OrganizerRef, ReviewLimits};

/// Longest email address (RFC 5321's path limit, and the column's).
pub const MAX_EMAIL_LEN: usize = 254;
/// Shortest password accepted for a new user.
pub const MIN_PASSWORD_LEN: usize = 8;
/// Longest password accepted anywhere: bounds the work of hashing it.
pub const MAX_PASSWORD_LEN: usize = 1024;

/// What a new user is made of.
#[derive(Debug, Clone, Default)]
pub struct NewUser {
    /// Email address; trimmed and lower-cased before it is stored.
    pub email: String,
    /// Password in clear; only its argon2id hash is stored.
    pub password: String,
    /// Full name (may be empty).
    pub fullname: String,
    /// Language code; empty means `en`.
    pub locale: String,
    /// Time zone name; empty means `UTC`.
    pub timezone: String,
    /// Staff of the service.
    pub is_staff: bool,
}

/// Why a user was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// Invalid fields, each with its message (a taken email is one of them).
    #[error("{}", join(.0))]
    Invalid(Vec<(&'static str, String)>),
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

fn join(errors: &[(&'static str, String)]) -> String {
    errors
        .iter()
        .map(|(field, message)| format!("{field}: {message}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The stored form of an email address: trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Whether a (normalized) email address is acceptable: one `@` with something on each side,
/// no spaces or control characters, at most [`MAX_EMAIL_LEN`] characters.
pub fn is_valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    email.chars().count() <= MAX_EMAIL_LEN
        && !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Why `password` cannot be a password: shorter than [`MIN_PASSWORD_LEN`] or longer than
/// [`MAX_PASSWORD_LEN`] characters.
pub fn password_problem(password: &str) -> Option<String> {
    let len = password.chars().count();
    if len < MIN_PASSWORD_LEN {
        Some(format!(
            "Ensure this field has at least {MIN_PASSWORD_LEN} characters."
        ))
    } else if len > MAX_PASSWORD_LEN {
        Some(format!(
            "Ensure this field has no more than {MAX_PASSWORD_LEN} characters."
        ))
    } else {
        None
    }
}

/// Longest full name, in characters.
pub const MAX_FULLNAME_LEN: usize = 255;

/// Gives a user a new full name (trimmed); `Err` with the message when it is longer than
/// [`MAX_FULLNAME_LEN`] characters.
pub async fn rename(
    db: &impl ConnectionTrait,
    user_id: i64,
    fullname: &str,
) -> Result<Result<(), String>, DbErr> {
    let fullname = fullname.trim();
    if fullname.chars().count() > MAX_FULLNAME_LEN {
        return Ok(Err(format!(
            "Ensure this field has no more than {MAX_FULLNAME_LEN} characters."
        )));
    }
    if fullname.chars().any(char::is_control) {
        return Ok(Err("Enter a name without control characters.".to_owned()));
    }
    user::Entity::update_many()
        .col_expr(user::Column::Fullname, fullname.into())
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(Ok(()))
}

/// Why a password was not set.
#[derive(Debug, thiserror::Error)]
pub enum SetPasswordError {
    /// The new password is too short or too long.
    #[error("{0}")]
    Invalid(String),
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Gives a user a new password and ends every session they have and every password-reset
/// link they were sent, all together, so that whoever signed in with the old one is signed
/// out everywhere (the caller signs the person in again where that is wanted).
pub async fn set_password(
    db: &sea_orm::DatabaseConnection,
    user_id: i64,
    password: String,
) -> Result<(), SetPasswordError> {
    if let Some(message) = password_problem(&password) {
        return Err(SetPasswordError::Invalid(message));
    }
    let hash = hash_password(password).await?;
    let txn = crate::db::begin_write(db).await?;
    store_password(&txn, user_id, &hash).await?;
    crate::db::commit(txn).await?;
    Ok(())
}

/// Stores a password hash for a user, in the caller's transaction, and ends their sessions
/// and open password-reset links.
pub async fn store_password(
    txn: &impl ConnectionTrait,
    user_id: i64,
    hash: &str,
) -> Result<(), DbErr> {
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, hash.into())
        .filter(user::Column::Id.eq(user_id))
        .exec(txn)
        .await?;
    super::sessions::delete_all_of(txn, user_id).await?;
    super::password_resets::end_all(txn, user_id).await
}

fn validate(new: &NewUser) -> Vec<(&'static str, String)> {
    let mut errors = Vec::new();
    if !is_valid_email(&normalize_email(&new.email)) {
        errors.push(("email", "Enter a valid email address.".to_owned()));
    }
    if let Some(message) = password_problem(&new.password) {
        errors.push(("password", message));
    }
    if new.fullname.chars().count() > 255 {
        errors.push((
            "fullname",
            "Ensure this field has no more than 255 characters.".to_owned(),
        ));
    }
    if new.locale.chars().count() > 50 {
        errors.push((
            "locale",
            "Ensure this field has no more than 50 characters.".to_owned(),
        ));
    }
    if !new.timezone.is_empty() && new.timezone.parse::<chrono_tz::Tz>().is_err() {
        errors.push(("timezone", "Unknown time zone.".to_owned()));
    }
    errors
}

fn taken() -> CreateError {
    CreateError::Invalid(vec![(
        "email",
        "A user with this email address already exists.".to_owned(),
    )])
}

/// Creates an active user; the email must be valid and not taken (compared
/// case-insensitively), the password at least [`MIN_PASSWORD_LEN`] characters.
pub async fn create_user(
    db: &impl ConnectionTrait,
    new: NewUser,
) -> Result<user::Model, CreateError> {
    let errors = validate(&new);
    if !errors.is_empty() {
        return Err(CreateError::Invalid(errors));
    }
    let email = normalize_email(&new.email);
    if find_by_email(db, &email).await?.is_some() {
        return Err(taken());
    }
    let password_hash = hash_password(new.password).await?;
    let inserted = user::ActiveModel {
        email: Set(email),
        password_hash: Set(password_hash),
        fullname: Set(new.fullname.trim().to_owned()),
        locale: Set(non_empty(new.locale, "en")),
        timezone: Set(non_empty(new.timezone, "UTC")),
        is_staff: Set(new.is_staff),
        active: Set(true),
        created: Set(crate::values::now()),
        code: Set(super::tokens::random_from(super::tokens::UNAMBIGUOUS, 8)),
        ..Default::default()
    }
    .insert(db)
    .await;
    match inserted {
        Ok(row) => Ok(row),
        // Taken between the check and the insert.
        Err(e) if crate::db::is_unique_violation(&e) => Err(taken()),
        Err(e) => Err(e.into()),
    }
}

fn non_empty(value: String, default: &str) -> String {
    let value = value.trim();
    if value.is_empty() {
        default.to_owned()
    } else {
        value.to_owned()
    }
}

/// The user with this email address (compared case-insensitively), active or not.
pub async fn find_by_email(
    db: &impl ConnectionTrait,
    email: &str,
) -> Result<Option<user::Model>, DbErr> {
    user::Entity::find()
        .filter(user::Column::Email.eq(normalize_email(email)))
        .one(db)
        .await
}

/// The active user with this ID.
pub async fn find_active(db: &impl ConnectionTrait, id: i64) -> Result<Option<user::Model>, DbErr> {
    Ok(user::Entity::find_by_id(id)
        .one(db)
        .await?
        .filter(|u| u.active))
}

/// The turns of password checks in this process: each argon2 computation holds a core and
/// about 19 MiB, so a burst of sign-ins queues for a few turns rather than exhausting
/// memory, and a check that waits too long is not made (the caller is told to come back).
#[derive(Debug)]
pub struct PasswordChecks {
    turns: Arc<Semaphore>,
    wait: std::time::Duration,
}

impl PasswordChecks {
    /// At most `at_once` checks at a time (at least one); a check waits at most `wait` for
    /// its turn.
    pub fn new(at_once: usize, wait: std::time::Duration) -> Self {
        Self {
            turns: Arc::new(Semaphore::new(at_once.max(1))),
            wait,
        }
    }

    /// Runs `work` on the blocking pool in a turn; `None` when no turn came in time. The
    /// turn ends with the work, not with the request: a client that hangs up does not
    /// free it while the work still runs.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<Option<T>, DbErr> {
        let turns = Arc::clone(&self.turns);
        let Ok(turn) = tokio::time::timeout(self.wait, turns.acquire_owned()).await else {
            return Ok(None);
        };
        let turn = turn.map_err(|e| DbErr::Custom(format!("password check failed: {e}")))?;
        let done = tokio::task::spawn_blocking(move || {
            let done = work();
            drop(turn);
            done
        })
        .await
        .map_err(|e| DbErr::Custom(format!("password check failed: {e}")))?;
        Ok(Some(done))
    }

    /// Hashes a password ([`hash_password`]) in a turn, for requests anybody can send;
    /// `None` when no turn came in time.
    pub async fn hash(&self, password: String) -> Result<Option<String>, DbErr> {
        self.run(move || hash_now(&password)).await?.transpose()
    }
}

/// Hashes a password with argon2id and a random salt, on the blocking pool; gives the PHC
/// string to store.
pub async fn hash_password(password: String) -> Result<String, DbErr> {
    tokio::task::spawn_blocking(move || hash_now(&password))
        .await
        .map_err(|e| DbErr::Custom(format!("password hashing failed: {e}")))?
}

/// Hashes a password with argon2id and a random salt, here and now (CPU-bound).
fn hash_now(password: &str) -> Result<String, DbErr> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| DbErr::Custom(format!("password hashing failed: {e}")))
}

/// Whether `password` is the user's password. CPU-bound (tens of milliseconds): call it
/// from a blocking task, or use [`check_credentials`]. The comparison inside argon2 is
/// constant-time; an over-long password is refused without hashing.
pub fn verify_password(user: &user::Model, password: &str) -> bool {
    verify_against(&user.password_hash, password)
}

fn verify_against(stored: &str, password: &str) -> bool {
    if password.len() > MAX_PASSWORD_LEN * 4 {
        return false;
    }
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

/// A hash no password matches in practice, verified against for unknown emails so that they
/// take as long as known ones.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(super::tokens::generate().as_bytes(), &salt)
        .map(|h| h.to_string())
        .unwrap_or_default()
});

/// What a check of an email and a password found.
#[derive(Debug)]
pub enum Checked {
    /// The active user with them.
    Valid(Box<user::Model>),
    /// No active user with them.
    Wrong,
    /// Not checked: too many checks are running; ask again in a moment.
    Busy,
}

/// The active user with this email and password. An unknown email, an inactive user and a
/// wrong password take the same time: a password is verified in every case (against a
/// dummy hash when there is no user), in one of `checks`' turns.
pub async fn check_credentials(
    db: &impl ConnectionTrait,
    checks: &PasswordChecks,
    email: &str,
    password: &str,
) -> Result<Checked, DbErr> {
    let found = find_by_email(db, email).await?;
    let stored = found
        .as_ref()
        .map_or_else(|| DUMMY_HASH.clone(), |u| u.password_hash.clone());
    let password = password.to_owned();
    let ok = checks
        .run(move || verify_against(&stored, &password))
        .await?;
    Ok(match (ok, found) {
        (None, _) => Checked::Busy,
        (Some(true), Some(user)) if user.active => Checked::Valid(Box::new(user)),
        _ => Checked::Wrong,
    })
}

/// What a sign-in came to.
#[derive(Debug)]
pub enum SignIn {
    /// The user with these credentials.
    SignedIn(i64),
    /// Wrong email or password (the same answer for both).
    Wrong,
    /// Refused without a check: too many attempts for the email or the client address.
    Locked,
    /// Not checked: too many checks are running; ask again in a moment.
    Busy,
}

/// Signs in with an email and a password from a client address (a key of
/// `http::limits::address_key`, when known): the attempt is counted under both before the
/// password is checked (see [`login_failures`]), given back on success, and the email's
/// earlier failures are forgotten then.
pub async fn sign_in(
    db: &impl ConnectionTrait,
    checks: &PasswordChecks,
    email: &str,
    address: Option<&str>,
    password: &str,
) -> Result<SignIn, DbErr> {
    // Counted under at most the characters an email can have: the key's column is bounded.
    let counted: String = email.chars().take(MAX_EMAIL_LEN).collect();
    let email_key = login_failures::email_key(&counted);
    let mut keys = vec![(email_key.clone(), login_failures::PER_EMAIL)];
    if let Some(address) = address {
        keys.push((
            login_failures::address_key(address),
            login_failures::PER_ADDRESS,
        ));
    }
    match login_failures::reserve(db, &keys).await? {
        Verdict::Locked => return Ok(SignIn::Locked),
        Verdict::Slow => tokio::time::sleep(login_failures::DELAY).await,
        Verdict::Go => {}
    }
    let valid = email.chars().count() <= MAX_EMAIL_LEN && password.len() <= MAX_PASSWORD_LEN;
    let checked = if valid {
        check_credentials(db, checks, email, password).await?
    } else {
        Checked::Wrong
    };
    match checked {
        Checked::Valid(user) => {
            login_failures::give_back(db, &keys).await?;
            login_failures::clear(db, &email_key).await?;
            Ok(SignIn::SignedIn(user.id))
        }
        Checked::Busy => {
            login_failures::give_back(db, &keys).await?;
            Ok(SignIn::Busy)
        }
        Checked::Wrong => {
            login_failures::failed(db, &keys).await?;
            Ok(SignIn::Wrong)
        }
    }
}

/// Makes the user a member of the team; nothing happens when they already are.
pub async fn add_to_team(
    db: &impl ConnectionTrait,
    user_id: i64,
    team_id: i64,
) -> Result<(), DbErr> {
    db.execute_raw(Statement::from_sql_and_values(
        db.get_database_backend(),
        "INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        [team_id.into(), user_id.into()],
    ))
    .await?;
    Ok(())
}

/// A signed-in user as a caller: their teams' grants.
pub async fn caller(db: &impl ConnectionTrait, user_id: i64) -> Result<Caller, DbErr> {
    Ok(Caller {
        kind: CallerKind::Session { user_id },
        grants: organizers_of(db, user_id).await?,
        kept: None,
    })
}

/// What an active user may see and do: one [`Grant`] per team they belong to, each with the
/// team's organizer, permissions and events (a `Caller` merges grants of one organizer).
/// Empty for an inactive or unknown user.
pub async fn organizers_of(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<Grant>, DbErr> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT t.*, o.slug AS organizer_slug, o.name AS organizer_name \
             FROM team_members m JOIN users u ON u.id = m.user_id \
             JOIN teams t ON t.id = m.team_id JOIN organizers o ON o.id = t.organizer_id \
             WHERE m.user_id = $1 AND u.active ORDER BY o.id, t.id",
            [user_id.into()],
        ))
        .await?;
    let mut grants = Vec::with_capacity(rows.len());
    for row in rows {
        let team = team::Model::from_query_result(&row, "")?;
        let events = if team.all_events {
            EventScope::All
        } else {
            EventScope::Only(teams::event_ids(db, team.id).await?)
        };
        grants.push(Grant {
            organizer: OrganizerRef {
                id: team.organizer_id,
                slug: row.try_get("", "organizer_slug")?,
                name: row.try_get("", "organizer_name")?,
            },
            permissions: teams::permissions(&team),
            events,
            review: ReviewLimits {
                hide_speaker_names: team.force_hide_speaker_names,
                tracks: if team.is_reviewer {
                    teams::track_ids(db, team.id).await?
                } else {
                    Vec::new()
                },
            },
        });
    }
    Ok(grants)
}
