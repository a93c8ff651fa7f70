//! Order positions on their own (`orderpositions/`), as pretix serves them: listed with its
//! filters, read, changed and canceled through the order change's rules, prints reported.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, Shop, created, id, shop};

const POSITIONS: &str = "/api/v1/organizers/acme/events/conf/orderpositions/";

fn ids(r: &Value) -> Vec<i64> {
    (r["results"].as_array().expect("results").iter())
        .map(|p| p["id"].as_i64().expect("id"))
        .collect()
}

async fn list(s: &Shop, query: &str) -> Value {
    let r = s.app.get(&format!("{POSITIONS}?{query}"), &s.token).await;
    assert_eq!(r.status, 200, "{query}: {}", r.body);
    r.body
}

fn pid(o: &Value, i: usize) -> i64 {
    o["positions"][i]["id"].as_i64().expect("id")
}

#[tokio::test]
async fn positions_are_listed_with_pretixs_filters_and_orderings() {
    let s = shop(None).await;
    let a = s
        .ordered(
            2,
            json!({"positions": [
            {"item": s.ticket, "attendee_name": "Grace Hopper"},
            {"item": s.ticket, "attendee_email": "alan@example.org"}]}),
        )
        .await;
    let b = s
        .ordered(1, json!({"status": "p", "email": "bob@example.org"}))
        .await;
    let all = list(&s, "").await;
    assert_eq!(all["count"], 3);
    assert_eq!(ids(&all), vec![pid(&a, 0), pid(&a, 1), pid(&b, 0)]);
    assert_eq!(all["results"][0]["order"], a["code"]);
    let code = a["code"].as_str().expect("code");
    for (query, expected) in [
        (
            format!("order={}", code.to_lowercase()),
            vec![pid(&a, 0), pid(&a, 1)],
        ),
        ("order__status=p".into(), vec![pid(&b, 0)]),
        ("order__status__in=n,e".into(), vec![pid(&a, 0), pid(&a, 1)]),
        (
            format!("item__in={},999", s.ticket),
            vec![pid(&a, 0), pid(&a, 1), pid(&b, 0)],
        ),
        ("search=hopper".into(), vec![pid(&a, 0)]),
        ("search=alan@".into(), vec![pid(&a, 1)]),
        ("search=bob@example".into(), vec![pid(&b, 0)]),
        (
            format!(
                "secret={}",
                a["positions"][1]["secret"].as_str().expect("s")
            ),
            vec![pid(&a, 1)],
        ),
        ("has_checkin=true".into(), vec![]),
        (
            "ordering=-positionid".into(),
            vec![pid(&a, 1), pid(&a, 0), pid(&b, 0)],
        ),
    ] {
        assert_eq!(ids(&list(&s, &query).await), expected, "{query}");
    }
    let r = s
        .app
        .get(&format!("{POSITIONS}?ordering=price"), &s.token)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = s
        .app
        .get(&format!("{POSITIONS}?item__in=1,x"), &s.token)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn a_canceled_position_is_gone_from_the_list_unless_asked_for_and_the_last_one_stays() {
    let s = shop(None).await;
    let o = s.ordered(2, json!({})).await;
    let gone = pid(&o, 1);
    let r = s.app.delete(&format!("{POSITIONS}{gone}/"), &s.token).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(ids(&list(&s, "").await), vec![pid(&o, 0)]);
    let with = list(&s, "include_canceled_positions=true").await;
    assert_eq!(ids(&with), vec![pid(&o, 0), gone]);
    assert_eq!(with["results"][1]["canceled"], true);
    let one = format!("{POSITIONS}{gone}/");
    assert_eq!(s.app.get(&one, &s.token).await.status, 404);
    let r = s
        .app
        .get(&format!("{one}?include_canceled_positions=true"), &s.token)
        .await;
    assert_eq!((r.status, &r.body["canceled"]), (200, &json!(true)));
    assert_eq!(s.app.delete(&one, &s.token).await.status, 404);
    let r = s
        .app
        .delete(&format!("{POSITIONS}{}/", pid(&o, 0)), &s.token)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!([
            "This operation would leave the order empty. Please cancel the order itself instead."
        ])
    );
    let stored = s
        .app
        .get(
            &format!("{EVENT}/orders/{}/", o["code"].as_str().expect("code")),
            &s.token,
        )
        .await;
    assert_eq!(stored.body["total"], "23.00");
}

#[tokio::test]
async fn a_patch_changes_the_attendee_and_replaces_the_answers() {
    let s = shop(None).await;
    let age = id(&created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Age?"}, "type": "N", "items": [s.ticket], "identifier": "AGE"}),
    )
    .await);
    let shirt = id(&created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Shirt?"}, "type": "S", "items": [s.ticket]}),
    )
    .await);
    let o = s
        .ordered(
            1,
            json!({"positions": [{"item": s.ticket, "answers": [
            {"question": age, "answer": "41"}, {"question": shirt, "answer": "XL"}]}]}),
        )
        .await;
    let url = format!("{POSITIONS}{}/", pid(&o, 0));
    let r = s
        .app
        .patch(
            &url,
            &s.token,
            json!({"attendee_name": "Ada Lovelace", "attendee_email": "ada@example.org",
                   "answers": [{"question": age, "answer": "42"}, {"question": shirt, "answer": ""}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["attendee_name"], "Ada Lovelace");
    assert_eq!(r.body["attendee_email"], "ada@example.org");
    let answers: Vec<(&Value, &Value)> = (r.body["answers"].as_array().expect("answers").iter())
        .map(|a| (&a["question"], &a["answer"]))
        .collect();
    assert_eq!(answers, vec![(&json!(age), &json!("42"))]);
    assert_eq!(r.body["secret"], o["positions"][0]["secret"]);

    for (body, expected) in [
        (
            json!({"attendee_name": "A", "attendee_name_parts": {"given_name": "A"}}),
            json!({"attendee_name": ["Do not specify attendee_name if you specified attendee_name_parts."]}),
        ),
        (
            json!({"answers": [{"question": age, "answer": "old"}]}),
            json!({"answers": ["Enter a valid number."]}),
        ),
        (
            json!({"answers": [{"question": age, "answer": "1"}, {"question": age, "answer": "2"}]}),
            json!([format!("Question {age} was sent twice.")]),
        ),
    ] {
        let r = s.app.patch(&url, &s.token, body).await;
        assert_eq!((r.status, &r.body), (400, &expected));
    }
    assert_eq!(
        s.app.get(&url, &s.token).await.body["attendee_name"],
        "Ada Lovelace"
    );
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    assert_eq!(
        s.app
            .patch(&url, &viewer, json!({"attendee_name": "X"}))
            .await
            .status,
        403
    );
    assert_eq!(s.app.get(&url, &viewer).await.status, 200);
}

#[tokio::test]
async fn a_patch_may_change_the_product_through_the_change_rules() {
    let s = shop(Some(1)).await;
    let o = s.ordered(1, json!({})).await;
    let url = format!("{POSITIONS}{}/", pid(&o, 0));
    let r = s.app.patch(&url, &s.token, json!({"price": "19.00"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["price"], "19.00");
    let stored = s
        .app
        .get(
            &format!("{EVENT}/orders/{}/", o["code"].as_str().expect("code")),
            &s.token,
        )
        .await;
    assert_eq!(stored.body["total"], "19.00");
    let r = s.app.patch(&url, &s.token, json!({"item": 999_999})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"item": ["Invalid pk \"999999\" - object does not exist."]})
    );
    assert_eq!(
        s.app
            .patch(&format!("{POSITIONS}999999/"), &s.token, json!({}))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn a_scanner_reports_what_it_printed() {
    let s = shop(None).await;
    let o = s.ordered(1, json!({})).await;
    let url = format!("{POSITIONS}{}/printlog/", pid(&o, 0));
    let r = s
        .app
        .post(
            &url,
            &s.token,
            json!({"source": "pretixscan", "type": "badge", "datetime": "2030-06-01T09:00:00Z",
                   "info": {"printer": "Zebra"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["successful"], true);
    assert_eq!(r.body["type"], "badge");
    assert_eq!(r.body["datetime"], "2030-06-01T09:00:00Z");
    assert_eq!(r.body["device_id"], Value::Null);
    assert_eq!(r.body["info"]["printer"], "Zebra");
    let r = s
        .app
        .post(&url, &s.token, json!({"source": "x", "type": "poster"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = s
        .app
        .post(
            &format!("{POSITIONS}999999/printlog/"),
            &s.token,
            json!({"source": "x", "type": "ticket"}),
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn a_position_is_added_to_an_order_with_its_attendee_and_answers_within_the_quota() {
    let s = shop(Some(2)).await;
    let age = id(&created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Age?"}, "type": "N", "items": [s.ticket]}),
    )
    .await);
    let o = s.ordered(1, json!({})).await;
    let code = o["code"].as_str().expect("code");
    let r = s
        .app
        .post(
            POSITIONS,
            &s.token,
            json!({"order": code, "item": s.ticket, "price": "20.00",
                   "attendee_name": "Grace Hopper", "answers": [{"question": age, "answer": "37"}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["order"], code);
    assert_eq!(r.body["positionid"], 2);
    assert_eq!(r.body["attendee_name"], "Grace Hopper");
    assert_eq!(r.body["answers"][0]["answer"], "37");
    let stored = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(stored.body["total"], "43.00");
    assert_eq!(s.availability(s.quota).await["available_number"], 0);

    let r = s
        .app
        .post(
            POSITIONS,
            &s.token,
            json!({"order": code, "item": s.ticket}),
        )
        .await;
    assert_eq!(r.status, 400, "the quota is sold out: {}", r.body);
    let r = s
        .app
        .post(
            POSITIONS,
            &s.token,
            json!({"order": code, "item": s.ticket, "answers": [{"question": age, "answer": "old"}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"answers": ["Enter a valid number."]}));
    let r = s
        .app
        .post(
            POSITIONS,
            &s.token,
            json!({"order": "ZZZZZ", "item": s.ticket}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["order"][0], "Object with code=ZZZZZ does not exist.");
    let viewer = s.app.token("acme", &["can_view_orders"]).await;
    let r = s
        .app
        .post(POSITIONS, &viewer, json!({"order": code, "item": s.ticket}))
        .await;
    assert_eq!(r.status, 403);
    let positions = s
        .app
        .get(&format!("{POSITIONS}?order={code}"), &s.token)
        .await;
    assert_eq!(positions.body["count"], 2, "refusals added nothing");
}
