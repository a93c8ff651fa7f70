//! `GET /api/v1/device/eventselection`: which event a device scans for, answered in the
//! spec's shape `{"event": <slug>, "subevent", "checkinlist"}`, 304 or 404.

use chrono::{Duration, Utc};
use poem::http::Method;
use serde_json::{Value, json};
use tessera::db;
use tessera_tests::{Reply, TestApp};

use crate::device_protocol::{as_device, initialized_device};

struct Site {
    app: TestApp,
    admin: String,
}

async fn site() -> Site {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    Site { app, admin }
}

impl Site {
    /// A live event `slug` from `from` to `to` hours from now; gives its ID.
    async fn event(&self, slug: &str, from: i64, to: i64) -> i64 {
        let id = self.app.event("acme", slug).await;
        let now = Utc::now();
        db::execute(
            &self.app.db,
            "UPDATE events SET live = $1, date_from = $2, date_to = $3 WHERE id = $4",
            [
                true.into(),
                (now + Duration::hours(from)).into(),
                (now + Duration::hours(to)).into(),
                id.into(),
            ],
        )
        .await
        .expect("dates");
        id
    }

    async fn list(&self, slug: &str, body: Value) -> i64 {
        let r = self
            .app
            .post(
                &format!("/api/v1/organizers/acme/events/{slug}/checkinlists/"),
                &self.admin,
                body,
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["id"].as_i64().expect("id")
    }

    async fn gate(&self) -> i64 {
        let r = self
            .app
            .post(
                "/api/v1/organizers/acme/gates/",
                &self.admin,
                json!({"name": "North"}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        r.body["id"].as_i64().expect("id")
    }

    async fn device(&self, gate: Option<i64>) -> String {
        initialized_device(
            &self.app,
            &self.admin,
            json!({"name": "Scanner", "all_events": true, "gate": gate}),
        )
        .await
    }

    async fn select(&self, device: &str, query: &str) -> Reply {
        as_device(
            &self.app,
            Method::GET,
            &format!("/api/v1/device/eventselection{query}"),
            device,
            None,
        )
        .await
    }
}

#[tokio::test]
async fn a_running_event_is_chosen_over_an_upcoming_one_with_its_list() {
    let s = site().await;
    s.event("now", -1, 3).await;
    s.event("later", 48, 52).await;
    let list = s.list("now", json!({"name": "Entrance"})).await;
    let device = s.device(None).await;
    let r = s.select(&device, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"event": "now", "subevent": null, "checkinlist": list})
    );
}

#[tokio::test]
async fn the_next_event_is_chosen_when_none_runs() {
    let s = site().await;
    s.event("soon", 30, 34).await;
    s.event("much-later", 300, 304).await;
    let device = s.device(None).await;
    let r = s.select(&device, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["event"], "soon");
    assert_eq!(r.body["checkinlist"], Value::Null);
}

#[tokio::test]
async fn between_two_events_the_device_switches_half_way() {
    let s = site().await;
    s.event("past", -110, -100).await;
    s.event("next", 20, 24).await;
    let device = s.device(None).await;
    assert_eq!(s.select(&device, "").await.body["event"], "next");
    let s = site().await;
    s.event("recent", -30, -20).await;
    s.event("far", 100, 104).await;
    let device = s.device(None).await;
    assert_eq!(s.select(&device, "").await.body["event"], "recent");
}

#[tokio::test]
async fn the_current_event_is_kept_while_it_runs() {
    let s = site().await;
    s.event("now", -1, 3).await;
    let list = s.list("now", json!({"name": "Entrance"})).await;
    let device = s.device(None).await;
    let r = s
        .select(
            &device,
            &format!("?current_event=now&current_checkinlist={list}"),
        )
        .await;
    assert_eq!(r.status, 304, "{:?}", r.body);
}

#[tokio::test]
async fn nothing_to_scan_for_is_not_found() {
    let s = site().await;
    let device = s.device(None).await;
    assert_eq!(s.select(&device, "").await.status, 404);
}

#[tokio::test]
async fn a_device_at_a_gate_sees_only_events_with_a_list_of_its_gate() {
    let s = site().await;
    let gate = s.gate().await;
    s.event("now", -1, 3).await;
    s.event("later", 48, 52).await;
    s.list("now", json!({"name": "Entrance"})).await;
    let gated = s
        .list("later", json!({"name": "North door", "gates": [gate]}))
        .await;
    let device = s.device(Some(gate)).await;
    let r = s.select(&device, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"event": "later", "subevent": null, "checkinlist": gated})
    );
}

#[tokio::test]
async fn a_list_with_the_current_lists_name_is_preferred() {
    let s = site().await;
    s.event("old", -200, -190).await;
    s.event("now", -1, 3).await;
    let current = s.list("old", json!({"name": "Entrance"})).await;
    s.list("now", json!({"name": "Backstage"})).await;
    let same = s.list("now", json!({"name": "Entrance"})).await;
    let device = s.device(None).await;
    let r = s
        .select(
            &device,
            &format!("?current_event=old&current_checkinlist={current}"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["checkinlist"], same);
}

#[tokio::test]
async fn only_devices_may_ask() {
    let s = site().await;
    let r = s.app.get("/api/v1/device/eventselection", &s.admin).await;
    assert_eq!(r.status, 403);
    let r = s
        .app
        .call(Method::GET, "/api/v1/device/eventselection", None, None)
        .await;
    assert_eq!(r.status, 401);
}
