//! Check-ins taken back (`checkinrpc/annul/`) as pretix: by nonce, within 15 minutes of
//! the check-in by the time the scanner sends.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::checkin_redeem::{Door, door};

const ANNUL: &str = "/api/v1/organizers/acme/checkinrpc/annul/";

async fn annul(d: &Door, body: Value) -> Reply {
    d.s.app.post(ANNUL, &d.s.token, body).await
}

async fn admitted(d: &Door, nonce: &str) -> String {
    let secret = d.paid().await;
    let r = d
        .scan(
            &secret,
            json!({"nonce": nonce, "datetime": "2030-06-01T09:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    secret
}

#[tokio::test]
async fn an_annulled_check_in_no_longer_counts_and_the_ticket_enters_again() {
    let d = door(json!({})).await;
    let secret = admitted(&d, "n-1").await;
    let r = annul(
        &d,
        json!({"lists": [d.list], "nonce": "n-1", "datetime": "2030-06-01T09:10:00Z",
               "error_explanation": "The gate did not open."}),
    )
    .await;
    assert_eq!((r.status, r.body), (200, json!({"status": "ok"})));
    let all = d.checkins("?successful=false").await;
    assert_eq!(all["results"][0]["error_reason"], "annulled", "{all}");
    assert_eq!(
        all["results"][0]["error_explanation"],
        "The gate did not open."
    );
    let again = d.scan(&secret, json!({})).await;
    assert_eq!(again.status, 201, "{}", again.body);
    let r = annul(&d, json!({"lists": [d.list], "nonce": "n-1"})).await;
    assert_eq!(
        (r.status, r.body),
        (400, json!(["Cannot annul an unsuccessful checkin"]))
    );
}

#[tokio::test]
async fn an_annulment_more_than_fifteen_minutes_late_is_refused_and_the_check_in_stays() {
    let d = door(json!({})).await;
    let secret = admitted(&d, "n-2").await;
    let r = annul(
        &d,
        json!({"lists": [d.list], "nonce": "n-2", "datetime": "2030-06-01T09:15:01Z"}),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"non_field_errors": ["Annulment is not allowed more than 15 minutes after check-in"]})
    );
    let again = d.scan(&secret, json!({})).await;
    assert_eq!(again.body["reason"], "already_redeemed", "{}", again.body);
}

#[tokio::test]
async fn an_unknown_nonce_is_404_and_bad_lists_are_400() {
    let d = door(json!({})).await;
    admitted(&d, "n-3").await;
    let r = annul(&d, json!({"lists": [d.list], "nonce": "other"})).await;
    assert_eq!(
        (r.status, r.body),
        (404, json!({"detail": "No check-in found based on nonce"}))
    );
    let r = annul(&d, json!({"lists": [999_999], "nonce": "n-3"})).await;
    assert_eq!(
        (r.status, r.body),
        (
            400,
            json!({"lists": ["Invalid pk \"999999\" - object does not exist."]})
        )
    );
    let r = annul(&d, json!({"lists": [], "nonce": "n-3"})).await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn a_device_annuls_only_its_own_check_ins() {
    use poem::http::Method;

    use crate::device_protocol::{as_device, initialized_device};
    let d = door(json!({})).await;
    let admin = d.s.app.device_admin_token("acme").await;
    let scanner = |name: &str| {
        let (app, admin) = (&d.s.app, admin.clone());
        let body = json!({"name": name, "all_events": true});
        async move { initialized_device(app, &admin, body).await }
    };
    let (north, south) = (scanner("North").await, scanner("South").await);
    let rpc = "/api/v1/organizers/acme/checkinrpc/redeem/";
    let secret = d.paid().await;
    let scan = json!({"lists": [d.list], "secret": secret, "nonce": "dev-1"});
    let r = as_device(&d.s.app, Method::POST, rpc, &north, Some(scan)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let body = json!({"lists": [d.list], "nonce": "dev-1"});
    let other = as_device(&d.s.app, Method::POST, ANNUL, &south, Some(body.clone())).await;
    assert_eq!(
        (other.status, other.body),
        (404, json!({"detail": "No check-in found based on nonce"}))
    );
    let team = annul(&d, body.clone()).await;
    assert_eq!(team.status, 400, "{}", team.body);
    assert_eq!(
        team.body,
        json!({"non_field_errors": ["Annulment is only allowed from the same device"]})
    );
    let own = as_device(&d.s.app, Method::POST, ANNUL, &north, Some(body)).await;
    assert_eq!((own.status, own.body), (200, json!({"status": "ok"})));
}
