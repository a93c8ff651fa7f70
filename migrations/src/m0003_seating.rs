//! Seating plans of organizers and the seats an event gets from its plan.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn fk(
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

fn index(
    name: &'static str,
    table: &'static str,
    cols: &[&'static str],
    unique: bool,
) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(name).table(table);
    for c in cols {
        i.col(*c);
    }
    if unique {
        i.unique();
    }
    i.to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("seating_plans")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string("name"))
                .col(json_binary("layout"))
                .foreign_key(&mut fk("seating_plans", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "seating_plans_organizer",
            "seating_plans",
            &["organizer_id"],
            false,
        ))
        .await?;
        // "Is this plan used by any event?" is asked on every change of a plan.
        m.create_index(index(
            "events_seating_plan",
            "events",
            &["seating_plan_id"],
            false,
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("seats")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string("seat_guid"))
                .col(string("name").default(""))
                .col(string("zone_name").default(""))
                .col(string("row_name").default(""))
                .col(string("seat_number").default(""))
                .col(string("category").default(""))
                .col(boolean("blocked").default(false))
                .col(boolean("sold").default(false))
                .foreign_key(&mut fk("seats", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "seats_event_guid",
            "seats",
            &["event_id", "seat_guid"],
            true,
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("seats").to_owned())
            .await?;
        m.drop_index(
            Index::drop()
                .name("events_seating_plan")
                .table("events")
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table("seating_plans").to_owned())
            .await?;
        Ok(())
    }
}
