//! Seats per date of an event series: each date has its own plan, mapping and seats, listed
//! under `subevents/{id}/seats/`, and a seat is sold once per date.

use serde_json::{Value, json};
use tessera_tests::{Reply, TestApp};

use crate::catalogue_support::{created, id};

const TOUR: &str = "/api/v1/organizers/acme/events/tour";

/// Seats `a1`, `a2` (Stalls) and `b1` (Balcony).
fn layout() -> Value {
    json!({"name": "Hall", "categories": [{"name": "Stalls"}, {"name": "Balcony"}],
        "zones": [{"name": "Main", "rows": [
            {"row_number": "1", "seats": [
                {"seat_guid": "a1", "seat_number": "1", "category": "Stalls"},
                {"seat_guid": "a2", "seat_number": "2", "category": "Stalls"}]},
            {"row_number": "2", "seats": [
                {"seat_guid": "b1", "seat_number": "1", "category": "Balcony"}]}]}]})
}

/// A series `tour` with a ticket and two dates, each with a quota and the plan, Stalls sold
/// as the ticket.
struct Tour {
    app: TestApp,
    token: String,
    ticket: i64,
    plan: i64,
    dates: [i64; 2],
}

async fn tour() -> Tour {
    let (app, _, token) = crate::catalogue_support::catalogue_app_on(TestApp::spawn().await).await;
    created(
        &app,
        "/api/v1/organizers/acme/events/",
        &token,
        json!({"name": {"en": "Tour"}, "slug": "tour", "currency": "EUR",
               "date_from": "2030-06-01T09:00:00Z", "has_subevents": true}),
    )
    .await;
    let ticket = id(&created(
        &app,
        &format!("{TOUR}/items/"),
        &token,
        json!({"name": {"en": "Ticket"}, "default_price": "10.00"}),
    )
    .await);
    let plan = id(&created(
        &app,
        "/api/v1/organizers/acme/seatingplans/",
        &token,
        json!({"name": "Hall", "layout": layout()}),
    )
    .await);
    let mut dates = [0; 2];
    for (i, from) in ["2030-06-01T09:00:00Z", "2030-07-01T09:00:00Z"]
        .iter()
        .enumerate()
    {
        dates[i] = id(&created(
            &app,
            &format!("{TOUR}/subevents/"),
            &token,
            json!({"name": {"en": format!("Date {i}")}, "date_from": from, "active": true,
                   "seating_plan": plan, "seat_category_mapping": {"Stalls": ticket}}),
        )
        .await);
        created(
            &app,
            &format!("{TOUR}/quotas/"),
            &token,
            json!({"name": format!("Date {i}"), "size": null, "items": [ticket],
                   "subevent": dates[i]}),
        )
        .await;
    }
    Tour {
        app,
        token,
        ticket,
        plan,
        dates,
    }
}

impl Tour {
    fn seats(&self, date: i64) -> String {
        format!("{TOUR}/subevents/{date}/seats/")
    }

    async fn list(&self, date: i64) -> Value {
        let r = self.app.get(&self.seats(date), &self.token).await;
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// The date's seat with this identifier.
    async fn seat(&self, date: i64, guid: &str) -> Value {
        let list = self.list(date).await;
        list["results"]
            .as_array()
            .and_then(|seats| seats.iter().find(|s| s["seat_guid"] == guid))
            .cloned()
            .unwrap_or_else(|| panic!("no seat {guid} on {date}: {list}"))
    }

    async fn order(&self, date: i64, guid: &str) -> Reply {
        self.app
            .post(
                &format!("{TOUR}/orders/"),
                &self.token,
                json!({"email": "ada@example.org", "positions": [
                    {"item": self.ticket, "subevent": date, "seat": guid}]}),
            )
            .await
    }
}

#[tokio::test]
async fn each_date_of_a_series_has_seats_of_its_own_made_from_its_plan() {
    let t = tour().await;
    let date = t
        .app
        .get(&format!("{TOUR}/subevents/{}/", t.dates[0]), &t.token)
        .await;
    assert_eq!(date.body["seating_plan"], t.plan);
    assert_eq!(
        date.body["seat_category_mapping"],
        json!({"Stalls": t.ticket})
    );
    let first = t.list(t.dates[0]).await;
    let second = t.list(t.dates[1]).await;
    assert_eq!(first["count"], 3);
    assert_eq!(second["count"], 3);
    let a1 = t.seat(t.dates[0], "a1").await;
    assert_eq!(a1["subevent"], t.dates[0]);
    assert_eq!(a1["product"], t.ticket);
    assert_eq!(a1["name"], "Main, Row 1, Seat 1");
    assert_eq!(t.seat(t.dates[0], "b1").await["product"], Value::Null);
    assert_ne!(a1["id"], t.seat(t.dates[1], "a1").await["id"]);
    let one = t
        .app
        .get(&format!("{}{}/", t.seats(t.dates[0]), a1["id"]), &t.token)
        .await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.body["seat_guid"], "a1");
    let other_date = t
        .app
        .get(&format!("{}{}/", t.seats(t.dates[1]), a1["id"]), &t.token)
        .await;
    assert_eq!(other_date.status, 403, "{}", other_date.body);
}

#[tokio::test]
async fn seats_of_a_series_are_found_only_under_its_dates_as_pretix_answers() {
    let t = tour().await;
    let series = t.app.get(&format!("{TOUR}/seats/"), &t.token).await;
    assert_eq!(series.status, 404);
    assert_eq!(
        series.body["detail"],
        "Please use the subevent-specific endpoint"
    );
    let unknown = t.app.get(&t.seats(999_999), &t.token).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["detail"], "Subevent not found");
    let single = t
        .app
        .get(
            "/api/v1/organizers/acme/events/conf/subevents/1/seats/",
            &t.token,
        )
        .await;
    assert_eq!(single.status, 404);
    assert_eq!(single.body["detail"], "This event has no subevents");
}

#[tokio::test]
async fn a_seat_is_sold_once_per_date() {
    let t = tour().await;
    for date in t.dates {
        let r = t.order(date, "a1").await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.body["positions"][0]["seat"]["seat_guid"], "a1");
        assert_eq!(t.seat(date, "a1").await["sold"], true);
    }
    let again = t.order(t.dates[0], "a1").await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body["positions"][0]["seat"][0],
        "The selected seat is already taken."
    );
    assert_eq!(t.seat(t.dates[1], "a2").await["sold"], false);
    let without = t
        .app
        .post(
            &format!("{TOUR}/orders/"),
            &t.token,
            json!({"positions": [{"item": t.ticket, "subevent": t.dates[1]}]}),
        )
        .await;
    assert_eq!(without.status, 400);
    assert_eq!(
        without.body["positions"][0]["seat"][0],
        "The product requires you to select a seat."
    );
}

#[tokio::test]
async fn a_seat_only_another_dates_plan_has_does_not_exist_on_this_date() {
    let t = tour().await;
    let small = id(&created(
        &t.app,
        "/api/v1/organizers/acme/seatingplans/",
        &t.token,
        json!({"name": "Small", "layout": {"name": "Small", "categories": [{"name": "Stalls"}],
            "zones": [{"name": "", "rows": [{"row_number": "1", "seats": [
                {"seat_guid": "c1", "seat_number": "1", "category": "Stalls"}]}]}]}}),
    )
    .await);
    let r = t
        .app
        .patch(
            &format!("{TOUR}/subevents/{}/", t.dates[1]),
            &t.token,
            json!({"seating_plan": small}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(t.list(t.dates[1]).await["count"], 1);
    let r = t.order(t.dates[0], "c1").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["positions"][0]["seat"][0],
        "The selected seat does not exist."
    );
    assert_eq!(t.order(t.dates[1], "c1").await.status, 201);
}

#[tokio::test]
async fn moving_a_seated_position_to_another_date_needs_a_seat_of_that_date() {
    let t = tour().await;
    let o = t.order(t.dates[0], "a1").await;
    assert_eq!(o.status, 201, "{}", o.body);
    let code = o.body["code"].as_str().expect("code");
    let position = o.body["positions"][0]["id"].clone();
    let change = |patch: Value| {
        let url = format!("{TOUR}/orders/{code}/change/");
        let body = json!({"patch_positions": [{"position": position, "body": patch}]});
        let app = &t.app;
        let token = &t.token;
        async move { app.post(&url, token, body).await }
    };
    let kept = change(json!({"subevent": t.dates[1]})).await;
    assert_eq!(kept.status, 400);
    assert_eq!(
        kept.body[0],
        "You selected seat \"Main, Row 1, Seat 1\" for a date that does not match the selected \
         ticket date. Please choose a seat again."
    );
    let moved = change(json!({"subevent": t.dates[1], "seat": "a2"})).await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(moved.body["positions"][0]["subevent"], t.dates[1]);
    assert_eq!(moved.body["positions"][0]["seat"]["seat_guid"], "a2");
    assert_eq!(t.seat(t.dates[0], "a1").await["sold"], false);
    assert_eq!(t.seat(t.dates[1], "a2").await["sold"], true);
    assert_eq!(t.seat(t.dates[1], "a1").await["sold"], false);
}

#[tokio::test]
async fn seats_of_one_date_are_blocked_and_released_in_bulk_all_or_none() {
    let t = tour().await;
    let block = format!("{}bulk_block/", t.seats(t.dates[0]));
    let r = t
        .app
        .post(&block, &t.token, json!({"seat_guids": ["a1", "zz"]}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["seat_guids"][0], "The seat 'zz' does not exist.");
    assert_eq!(t.seat(t.dates[0], "a1").await["blocked"], false);
    let both = t
        .app
        .post(&block, &t.token, json!({"seat_guids": ["a1"], "ids": [1]}))
        .await;
    assert_eq!(both.status, 400);
    assert_eq!(
        both.body["non_field_errors"][0],
        "Please pass either seat_guids or ids."
    );
    let r = t
        .app
        .post(&block, &t.token, json!({"seat_guids": ["a1", "a2"]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, json!({}));
    assert_eq!(t.seat(t.dates[0], "a2").await["state"], "blocked");
    assert_eq!(t.seat(t.dates[1], "a1").await["blocked"], false);
    let blocked = t.order(t.dates[0], "a1").await;
    assert_eq!(blocked.status, 400, "{}", blocked.body);
    let a2 = t.seat(t.dates[0], "a2").await["id"].clone();
    let release = format!("{}bulk_unblock/", t.seats(t.dates[0]));
    let r = t.app.post(&release, &t.token, json!({"ids": [a2]})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(t.seat(t.dates[0], "a2").await["blocked"], false);
    assert_eq!(t.seat(t.dates[0], "a1").await["blocked"], true);
    let one = t
        .app
        .patch(
            &format!("{}{a2}/", t.seats(t.dates[0])),
            &t.token,
            json!({"blocked": true}),
        )
        .await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.body["blocked"], true);
}

#[tokio::test]
async fn a_voucher_for_a_seat_names_the_seat_of_its_date() {
    let t = tour().await;
    assert_eq!(t.order(t.dates[1], "a1").await.status, 201);
    let voucher = |date: i64| json!({"code": format!("SEAT{date}"), "item": t.ticket, "subevent": date, "seat": "a1"});
    let url = format!("{TOUR}/vouchers/");
    let free = t.app.post(&url, &t.token, voucher(t.dates[0])).await;
    assert_eq!(free.status, 201, "{}", free.body);
    assert_eq!(free.body["seat"], "a1");
    let sold = t.app.post(&url, &t.token, voucher(t.dates[1])).await;
    assert_eq!(sold.status, 400);
    assert!(
        sold.body["seat"][0]
            .as_str()
            .is_some_and(|m| m.contains("currently unavailable")),
        "{}",
        sold.body
    );
}

#[tokio::test]
async fn a_date_keeps_its_plan_while_a_seat_is_sold_and_orders_keep_the_date() {
    let t = tour().await;
    assert_eq!(t.order(t.dates[0], "a1").await.status, 201);
    let date = format!("{TOUR}/subevents/{}/", t.dates[0]);
    let removed = t
        .app
        .patch(&date, &t.token, json!({"seating_plan": null}))
        .await;
    assert_eq!(removed.status, 400);
    assert!(
        removed.body["seating_plan"][0].is_string(),
        "{}",
        removed.body
    );
    assert_eq!(t.list(t.dates[0]).await["count"], 3);
    let plan = format!("/api/v1/organizers/acme/seatingplans/{}/", t.plan);
    assert_eq!(t.app.delete(&plan, &t.token).await.status, 403);
    let deleted = t.app.delete(&date, &t.token).await;
    assert_eq!(deleted.status, 403);
    assert!(
        deleted.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("already been used in orders")),
        "{}",
        deleted.body
    );
    let unused = format!("{TOUR}/subevents/{}/", t.dates[1]);
    assert_eq!(t.app.delete(&unused, &t.token).await.status, 204);
    assert_eq!(t.app.get(&t.seats(t.dates[1]), &t.token).await.status, 404);
    let quotas = t.app.get(&format!("{TOUR}/quotas/"), &t.token).await;
    assert_eq!(quotas.body["count"], 1, "the date's quota went with it");
}

#[tokio::test]
async fn a_mapping_of_a_date_to_an_unknown_item_is_400_and_writes_nothing() {
    let t = tour().await;
    let r = t
        .app
        .post(
            &format!("{TOUR}/subevents/"),
            &t.token,
            json!({"name": {"en": "Bad"}, "date_from": "2030-08-01T09:00:00Z",
                   "seating_plan": t.plan, "seat_category_mapping": {"Stalls": 999_999}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["seat_category_mapping"][0],
        "Item '999999' does not exist."
    );
    let dates = t.app.get(&format!("{TOUR}/subevents/"), &t.token).await;
    assert_eq!(dates.body["count"], 2);
}

#[tokio::test]
async fn changing_a_position_to_a_product_sold_by_seat_needs_a_seat() {
    let t = tour().await;
    let standing = id(&created(
        &t.app,
        &format!("{TOUR}/items/"),
        &t.token,
        json!({"name": {"en": "Standing"}, "default_price": "5.00"}),
    )
    .await);
    let quota = t
        .app
        .get(&format!("{TOUR}/quotas/?subevent={}", t.dates[0]), &t.token)
        .await;
    let quota = quota.body["results"][0]["id"].clone();
    let r = t
        .app
        .patch(
            &format!("{TOUR}/quotas/{quota}/"),
            &t.token,
            json!({"items": [t.ticket, standing]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let o = t
        .app
        .post(
            &format!("{TOUR}/orders/"),
            &t.token,
            json!({"positions": [{"item": standing, "subevent": t.dates[0]}]}),
        )
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let code = o.body["code"].as_str().expect("code");
    let position = o.body["positions"][0]["id"].clone();
    let url = format!("{TOUR}/orders/{code}/change/");
    let patch = |body: Value| json!({"patch_positions": [{"position": position, "body": body}]});
    let seatless = t
        .app
        .post(&url, &t.token, patch(json!({"item": t.ticket})))
        .await;
    assert_eq!(seatless.status, 400, "{}", seatless.body);
    assert_eq!(
        seatless.body[0],
        "The selected product requires you to select a seat."
    );
    let standing_seat = t
        .app
        .post(&url, &t.token, patch(json!({"seat": "a1"})))
        .await;
    assert_eq!(standing_seat.status, 400, "{}", standing_seat.body);
    assert_eq!(
        standing_seat.body[0],
        "The selected product does not allow to select a seat."
    );
    let seated = t
        .app
        .post(
            &url,
            &t.token,
            patch(json!({"item": t.ticket, "seat": "a1"})),
        )
        .await;
    assert_eq!(seated.status, 200, "{}", seated.body);
    assert_eq!(t.seat(t.dates[0], "a1").await["sold"], true);
}
