//! What an operator needs before and beside the service: opening the service's database
//! (never a new one by accident), the first organizer with its administrator and token in
//! one step, a new password for a user, and a consistent copy of a SQLite database while
//! the service runs.

use std::path::Path;

use sea_orm::{ActiveModelTrait, DatabaseConnection};

use super::{AdminError, insert_organizer, invalid};
use crate::db::entities::{organizer, user};
use crate::domain::permissions::PermissionSet;
use crate::domain::{teams, users};

/// Opens the database of `url` for an operator command, brought up to date. A database that
/// does not exist yet, or holds no Tessera schema, is refused with a message naming it
/// (an operator in the wrong directory would otherwise work on a new, empty one), unless
/// `create` asks for it to be made.
pub async fn open(url: &str, create: bool) -> Result<DatabaseConnection, AdminError> {
    if !create && !crate::db::has_schema(url).await? {
        return Err(invalid(format!(
            "no Tessera database in {}: point the command at the service's database \
             (--config, TESSERA_CONFIG, TESSERA_DATABASE_URL or --database-url), or create \
             this one with `tessera migrate` or --create-database",
            crate::db::describe_url(url)
        )));
    }
    Ok(crate::db::connect_migrated(url, 2).await?)
}

/// The first organizer of an installation with the person who runs it.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    /// The organizer's slug (its URLs' name).
    pub organizer: String,
    /// The organizer's display name.
    pub organizer_name: String,
    /// The administrator's email address.
    pub email: String,
    /// The administrator's password.
    pub password: String,
    /// The administrator's full name.
    pub fullname: String,
}

/// What [`bootstrap`] made.
#[derive(Debug)]
pub struct Bootstrapped {
    /// The organizer.
    pub organizer: organizer::Model,
    /// The administrator, who signs in with the password given.
    pub user: user::Model,
    /// The name of the team with every permission on all events, the administrator in it.
    pub team: &'static str,
    /// An API token of that team (stored only as a hash: shown once).
    pub token: String,
}

/// The team [`bootstrap`] makes.
pub const ADMIN_TEAM: &str = "Administrators";

/// Creates an organizer, a user, a team of the organizer with every permission on all
/// events with the user in it, and an API token of the team: all of it or, when any part is
/// refused (a taken slug or email, a short password), nothing.
pub async fn bootstrap(
    db: &DatabaseConnection,
    req: &Bootstrap,
) -> Result<Bootstrapped, AdminError> {
    let txn = crate::db::begin_write(db).await?;
    let organizer = insert_organizer(&txn, &req.organizer, &req.organizer_name).await?;
    let new = users::NewUser {
        email: req.email.clone(),
        password: req.password.clone(),
        fullname: req.fullname.clone(),
        ..Default::default()
    };
    let user = users::create_user(&txn, new).await.map_err(|e| match e {
        users::CreateError::Db(e) => AdminError::Db(e),
        refused => invalid(refused.to_string()),
    })?;
    let team = teams::new_team(organizer.id, ADMIN_TEAM, true, PermissionSet::all())
        .insert(&txn)
        .await?;
    users::add_to_team(&txn, user.id, team.id).await?;
    let (_, token) = teams::create_token(&txn, team.id, "bootstrap").await?;
    crate::db::commit(txn).await?;
    Ok(Bootstrapped {
        organizer,
        user,
        team: ADMIN_TEAM,
        token,
    })
}

/// Gives the user with `email` a new password; every session they had ends.
pub async fn set_password(
    db: &DatabaseConnection,
    email: &str,
    password: String,
) -> Result<user::Model, AdminError> {
    let user = users::find_by_email(db, email)
        .await?
        .ok_or_else(|| invalid(format!("no user with email {email:?}")))?;
    users::set_password(db, user.id, password)
        .await
        .map_err(|e| match e {
            users::SetPasswordError::Invalid(message) => invalid(format!("password: {message}")),
            users::SetPasswordError::Db(e) => AdminError::Db(e),
        })?;
    Ok(user)
}

/// Writes a consistent copy of the SQLite database of `url` to the new file `to`, while the
/// service goes on writing (`VACUUM INTO`: one read transaction, so the copy is the
/// database at one moment, complete with its indexes). PostgreSQL is backed up with its own
/// tool: the refusal gives the `pg_dump` line. A copy that fails leaves no file; one that
/// succeeds is synced to disk.
pub async fn backup(db: &DatabaseConnection, url: &str, to: &Path) -> Result<(), AdminError> {
    if crate::db::sqlite_path(url).is_none() {
        return Err(invalid(match pg_dump_line(url, to) {
            Some(line) => format!("back PostgreSQL up with pg_dump: {line}"),
            None => "only a SQLite file can be backed up this way".to_owned(),
        }));
    }
    if to.exists() {
        return Err(invalid(format!(
            "{} exists already: back up to a new file",
            to.display()
        )));
    }
    let target = to
        .to_str()
        .ok_or_else(|| invalid("the backup file's name must be UTF-8"))?;
    // Empty, and readable by this user alone, as the database is: it holds token hashes.
    crate::db::create_private_file(to)?;
    if let Err(e) = crate::db::execute(db, "VACUUM INTO $1", [target.into()]).await {
        // No half-written or empty file is left to be taken for a backup.
        let _ = std::fs::remove_file(to);
        return Err(e.into());
    }
    // On disk, with its directory entry, before the command says it is done.
    let parent = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let synced = std::fs::File::open(to)
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::File::open(parent))
        .and_then(|d| d.sync_all());
    if let Err(e) = synced {
        let _ = std::fs::remove_file(to);
        return Err(invalid(format!("cannot sync {}: {e}", to.display())));
    }
    Ok(())
}

/// The `pg_dump` command that writes the database of a PostgreSQL `url` to `to` (the
/// password comes from `PGPASSWORD` or `~/.pgpass`, never the command line).
fn pg_dump_line(url: &str, to: &Path) -> Option<String> {
    let options: sea_orm::sqlx::postgres::PgConnectOptions = url.parse().ok()?;
    Some(format!(
        "pg_dump --format=custom --file={} --host={} --port={} --username={} {}",
        to.display(),
        options.get_host(),
        options.get_port(),
        options.get_username(),
        options.get_database().unwrap_or(options.get_username())
    ))
}
