//! Small builders the migrations share.

use sea_orm_migration::prelude::*;

/// A foreign key from `from_table.from_col` to `to.id` that deletes along with its target.
pub fn fk(
    from_table: &'static str,
    from_col: &'static str,
    to: &'static str,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(from_table, from_col)
        .to(to, "id")
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

/// A nullable reference from `from_table.from_col` to `to.id` that is cleared when its target
/// is deleted (a row that outlives what it was about).
pub fn fk_set_null(
    from_table: &'static str,
    from_col: &'static str,
    to: &'static str,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(from_table, from_col)
        .to(to, "id")
        .on_delete(ForeignKeyAction::SetNull)
        .to_owned()
}

/// An index on the columns.
pub fn index(
    name: &'static str,
    table: &'static str,
    cols: &[&'static str],
) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(name).table(table);
    for c in cols {
        i.col(*c);
    }
    i.to_owned()
}

/// A unique index on the columns.
pub fn unique_index(
    name: &'static str,
    table: &'static str,
    cols: &[&'static str],
) -> IndexCreateStatement {
    index(name, table, cols).unique().to_owned()
}
