//! Reseller accounts: users permitted on an account create organizers for its customers,
//! and become administrators of what they create.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, QueryTrait, Select, Set,
};

use crate::db::entities::{organizer, reseller, reseller_user};
use crate::domain::permissions::PermissionSet;
use crate::domain::{slug, teams, users};

/// Longest organizer name accepted.
pub const MAX_NAME_LEN: usize = 200;

/// The reseller accounts a user is permitted on, by ID.
pub fn of_user(user_id: i64) -> Select<reseller::Entity> {
    let permitted = reseller_user::Entity::find()
        .select_only()
        .column(reseller_user::Column::ResellerId)
        .filter(reseller_user::Column::UserId.eq(user_id))
        .into_query();
    reseller::Entity::find()
        .filter(reseller::Column::Id.in_subquery(permitted))
        .order_by_asc(reseller::Column::Id)
}

/// The reseller account with this ID, when the user is permitted on it.
pub async fn find_for_user(
    db: &impl ConnectionTrait,
    user_id: i64,
    id: i64,
) -> Result<Option<reseller::Model>, DbErr> {
    of_user(user_id)
        .filter(reseller::Column::Id.eq(id))
        .one(db)
        .await
}

/// Why an organizer was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// Invalid fields, each with its message.
    #[error("invalid input")]
    Invalid(Vec<(&'static str, String)>),
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] DbErr),
}

/// Creates an organizer for a reseller account. The user gets a new team with every
/// permission on it, and becomes its member. The slug must be valid and not taken.
pub async fn create_organizer(
    db: &DatabaseConnection,
    account: &reseller::Model,
    user_id: i64,
    name: &str,
    new_slug: &str,
) -> Result<organizer::Model, CreateError> {
    let mut invalid = Vec::new();
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
        invalid.push((
            "name",
            format!("Enter a name of 1 to {MAX_NAME_LEN} characters."),
        ));
    }
    if !slug::is_valid(new_slug) {
        invalid.push((
            "slug",
            "Enter a valid slug: letters, digits, '-' and '.', starting with a letter or digit."
                .to_owned(),
        ));
    } else if !slug::is_free_for_organizer(new_slug) {
        invalid.push(("slug", slug::reserved_message(new_slug)));
    }
    if !invalid.is_empty() {
        return Err(CreateError::Invalid(invalid));
    }
    let txn = crate::db::begin_write(db).await?;
    let taken = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(new_slug))
        .one(&txn)
        .await?
        .is_some();
    if taken {
        return Err(CreateError::Invalid(vec![(
            "slug",
            "This slug is already in use.".to_owned(),
        )]));
    }
    let org = organizer::ActiveModel {
        slug: Set(new_slug.to_owned()),
        name: Set(name.to_owned()),
        created: Set(crate::values::now()),
        reseller_id: Set(Some(account.id)),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    super::sales_channels::create_built_in(&txn, org.id).await?;
    let team = teams::new_team(org.id, "Administrators", true, PermissionSet::all())
        .insert(&txn)
        .await?;
    users::add_to_team(&txn, user_id, team.id).await?;
    crate::db::commit(txn).await?;
    Ok(org)
}

/// Creates a reseller account and permits these users on it.
pub async fn create_reseller(
    db: &DatabaseConnection,
    name: &str,
    user_ids: &[i64],
) -> Result<reseller::Model, DbErr> {
    let txn = crate::db::begin_write(db).await?;
    let account = reseller::ActiveModel {
        name: Set(name.to_owned()),
        public_name: Set(name.to_owned()),
        public_url: Set(String::new()),
        support_email: Set(String::new()),
        support_phone: Set(String::new()),
        communication_language: Set("en".to_owned()),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    for user_id in user_ids {
        reseller_user::Entity::insert(reseller_user::ActiveModel {
            reseller_id: Set(account.id),
            user_id: Set(*user_id),
        })
        .exec_without_returning(&txn)
        .await?;
    }
    crate::db::commit(txn).await?;
    Ok(account)
}
