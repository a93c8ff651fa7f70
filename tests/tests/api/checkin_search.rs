//! Finding tickets at the door: `checkinrpc/search/` and `checkinlists/{id}/positions/`, and
//! the event's check-ins with their filters.

use poem::http::Method;
use serde_json::json;

use crate::checkin_redeem::door;
use crate::selling_support::EVENT;

#[tokio::test]
async fn search_finds_tickets_by_secret_order_code_and_email() {
    let d = door(json!({})).await;
    let o =
        d.s.ordered(1, json!({"status": "p", "email": "grace@example.org"}))
            .await;
    let code = o["code"].as_str().expect("code");
    let secret = o["positions"][0]["secret"].as_str().expect("secret");
    d.paid().await;
    let base = format!("/api/v1/organizers/acme/checkinrpc/search/?list={}", d.list);
    for q in [&secret[..6], code, "grace@"] {
        let r = d.s.app.get(&format!("{base}&search={q}"), &d.s.token).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["count"], 1, "search {q}: {}", r.body);
        assert_eq!(r.body["results"][0]["secret"], secret);
    }
    let all = d.s.app.get(&base, &d.s.token).await;
    assert_eq!(all.body["count"], 2);
}

#[tokio::test]
async fn has_checkin_and_status_filters_narrow_the_positions() {
    let d = door(json!({})).await;
    let a = d.paid().await;
    d.paid().await;
    d.ticket(json!({})).await;
    assert_eq!(d.scan(&a, json!({})).await.status, 201);
    let base = format!("{EVENT}/checkinlists/{}/positions/", d.list);
    let r =
        d.s.app
            .get(&format!("{base}?has_checkin=true"), &d.s.token)
            .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["secret"], a.as_str());
    assert_eq!(r.body["results"][0]["checkins"][0]["list"], d.list);
    let r =
        d.s.app
            .get(&format!("{base}?has_checkin=false"), &d.s.token)
            .await;
    assert_eq!(r.body["count"], 1);
    let r =
        d.s.app
            .get(&format!("{base}?ignore_status=true"), &d.s.token)
            .await;
    assert_eq!(r.body["count"], 3);
    let r =
        d.s.app
            .get(
                &format!("{base}?ignore_status=true&order__status=n"),
                &d.s.token,
            )
            .await;
    assert_eq!(r.body["count"], 1);
}

#[tokio::test]
async fn without_view_orders_only_a_search_of_three_characters_finds_anything() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let scanner = d.s.app.token("acme", &["can_checkin_orders"]).await;
    let base = format!("/api/v1/organizers/acme/checkinrpc/search/?list={}", d.list);
    assert_eq!(d.s.app.get(&base, &scanner).await.body["count"], 0);
    let short =
        d.s.app
            .get(&format!("{base}&search={}", &secret[..2]), &scanner)
            .await;
    assert_eq!(short.body["count"], 0);
    let long =
        d.s.app
            .get(&format!("{base}&search={}", &secret[..5]), &scanner)
            .await;
    assert_eq!(long.body["count"], 1);
}

#[tokio::test]
async fn search_on_lists_the_caller_cannot_read_is_forbidden_naming_them() {
    let d = door(json!({})).await;
    let r =
        d.s.app
            .get(
                &format!(
                    "/api/v1/organizers/acme/checkinrpc/search/?list={}&list=999999",
                    d.list
                ),
                &d.s.token,
            )
            .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body["detail"],
        "You requested lists that do not exist or that you do not have access to: 999999"
    );
}

#[tokio::test]
async fn checkins_filter_by_type_list_and_time() {
    let d = door(json!({})).await;
    let a = d.paid().await;
    assert_eq!(d.scan(&a, json!({})).await.status, 201);
    assert_eq!(d.scan(&a, json!({"type": "exit"})).await.status, 201);
    let exits = d.checkins("?type=exit").await;
    assert_eq!(exits["count"], 1);
    assert_eq!(exits["results"][0]["type"], "exit");
    let on_list = d.checkins(&format!("?list={}", d.list)).await;
    assert_eq!(on_list["count"], 2);
    let later = d.checkins("?datetime_since=2999-01-01T00:00:00Z").await;
    assert_eq!(later["count"], 0);
    let newest = d.checkins("?ordering=-id").await;
    assert_eq!(newest["results"][0]["type"], "exit");
}

#[tokio::test]
async fn a_kiosk_searches_with_three_characters_at_least_and_never_sees_a_secret() {
    let d = door(json!({})).await;
    let secret = d.paid().await;
    let admin = d.s.app.device_admin_token("acme").await;
    let search = |device: String, query: String| {
        let app = &d.s.app;
        let path = format!(
            "/api/v1/organizers/acme/checkinrpc/search/?list={}&{query}",
            d.list
        );
        async move {
            let r = crate::device_protocol::as_device(app, Method::GET, &path, &device, None).await;
            assert_eq!(r.status, 200, "{}", r.body);
            r.body
        }
    };
    let full = crate::device_protocol::initialized_device(
        &d.s.app,
        &admin,
        json!({"name": "Desk", "all_events": true}),
    )
    .await;
    assert_eq!(
        search(full, "search=a".into()).await["count"],
        1,
        "a full device may"
    );
    for profile in ["service_checkin_online_kiosk", "pretixscan_online_kiosk"] {
        let kiosk = crate::device_protocol::initialized_device(
            &d.s.app,
            &admin,
            json!({"name": profile, "all_events": true, "security_profile": profile}),
        )
        .await;
        for short in ["search=a", "search=ad", ""] {
            let found = search(kiosk.clone(), short.into()).await;
            assert_eq!(found["count"], 0, "{profile} {short}: {found}");
        }
        let prefix = format!("search={}", &secret[..6]);
        let found = search(kiosk.clone(), prefix).await;
        assert_eq!(found["count"], 0, "no secret a letter at a time: {found}");
        let found = search(kiosk.clone(), "search=ada".into()).await;
        assert_eq!(found["count"], 1, "{found}");
        assert!(found["results"][0].get("secret").is_none(), "{found}");
        assert!(!found.to_string().contains(&secret), "{found}");
        let exact = search(kiosk, format!("secret={secret}")).await;
        assert_eq!(exact["count"], 1, "an exact secret still finds its ticket");
    }
}
