//! Device security profiles, operation by operation: every operation of a profile's
//! allow-list passes the profile (whatever the operation then answers), others are 403.

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::devices::profiles::{self, DeviceProfile};
use tessera::plugin::Plugin;
use tessera_tests::{Reply, TestApp};

use crate::device_protocol::{as_device, initialized_device, setup};

const DENIED: &str = "Request denied by device security profile.";

fn denied_by_profile(r: &Reply) -> bool {
    r.status == 403 && r.body == json!({"detail": DENIED})
}

/// A concrete path for a template without parameter names: the organizer `acme`, the
/// event `conf`, and `1` for every other parameter.
fn concrete(template: &str) -> String {
    let mut out = Vec::new();
    let mut previous = "";
    for segment in template.split('/') {
        let value = match (segment, previous) {
            ("{}", "organizers") => "acme",
            ("{}", "events") => "conf",
            ("{}", _) => "1",
            (s, _) => s,
        };
        out.push(value.to_owned());
        previous = segment;
    }
    let path = out.join("/");
    if path.starts_with("/api/v1/organizers/") {
        format!("{path}/")
    } else {
        path
    }
}

fn method(name: &str) -> Method {
    Method::from_bytes(name.as_bytes()).expect("method")
}

async fn call(app: &TestApp, token: &str, m: &str, path: &str) -> Reply {
    let body = (m != "GET").then(|| json!({}));
    as_device(app, method(m), path, token, body).await
}

/// Each operation of the profile, with a device of its own (some operations roll or
/// revoke the device's token), passes the profile.
async fn every_operation_passes(app: &TestApp, admin: &str, profile: &str) -> usize {
    let found = profiles::find(profile, &[]).expect("profile");
    let operations = found.operations().expect("an allow-list").to_vec();
    for (m, template) in &operations {
        let token = initialized_device(
            app,
            admin,
            json!({"name": "Scanner", "all_events": true, "security_profile": profile}),
        )
        .await;
        let path = concrete(template);
        let r = call(app, &token, m, &path).await;
        assert!(
            !denied_by_profile(&r),
            "{profile}: {m} {path} was denied: {}",
            r.body
        );
    }
    operations.len()
}

async fn denied(app: &TestApp, token: &str, operations: &[(&str, &str)]) {
    for (m, path) in operations {
        let r = call(app, token, m, path).await;
        assert!(
            denied_by_profile(&r),
            "{m} {path} passed: {} {}",
            r.status,
            r.body
        );
    }
}

const ORDERS: &str = "/api/v1/organizers/acme/events/conf/orders/";

/// Operations no check-in profile allows.
const OUTSIDE_CHECKIN: &[(&str, &str)] = &[
    ("GET", "/api/v1/organizers/acme/"),
    ("GET", "/api/v1/organizers/acme/events/conf/vouchers/"),
    ("GET", "/api/v1/organizers/acme/events/conf/quotas/"),
    ("POST", "/api/v1/organizers/acme/events/conf/items/"),
    ("PATCH", "/api/v1/organizers/acme/events/conf/"),
    ("GET", "/api/v1/organizers/acme/giftcards/"),
    ("GET", "/api/v1/organizers/acme/events/conf/orders/ABC12/"),
    ("GET", "/api/v1/organizers/acme/events/conf/items/1/"),
];

#[tokio::test]
async fn service_checkin_allows_each_of_its_operations_and_nothing_else() {
    let (app, admin) = setup().await;
    let count = every_operation_passes(&app, &admin, "service_checkin").await;
    assert_eq!(count, 29);
    let token = initialized_device(
        &app,
        &admin,
        json!({"name": "S", "all_events": true, "security_profile": "service_checkin"}),
    )
    .await;
    denied(&app, &token, OUTSIDE_CHECKIN).await;
    // Offline sync and live registration are in.
    assert_eq!(call(&app, &token, "GET", ORDERS).await.status, 200);
}

#[tokio::test]
async fn the_kiosk_allows_each_of_its_operations_but_no_order_sync_or_registration() {
    let (app, admin) = setup().await;
    let count = every_operation_passes(&app, &admin, "service_checkin_online_kiosk").await;
    assert_eq!(count, 24);
    let token = initialized_device(
        &app,
        &admin,
        json!({"name": "K", "all_events": true, "security_profile": "service_checkin_online_kiosk"}),
    )
    .await;
    denied(&app, &token, OUTSIDE_CHECKIN).await;
    denied(&app, &token, &[("GET", ORDERS), ("POST", ORDERS)]).await;
    let kiosk = profiles::find("service_checkin_online_kiosk", &[]).expect("kiosk");
    for template in [
        "/api/v1/organizers/{organizer}/events/{event}/revokedsecrets/",
        "/api/v1/organizers/{organizer}/events/{event}/blockedsecrets/",
        "/api/v1/organizers/{organizer}/events/{event}/checkinlists/{list}/positions/",
    ] {
        assert!(!kiosk.permits("GET", template), "{template}");
    }
}

#[tokio::test]
async fn pretix_profile_names_act_as_their_nearest_profile() {
    let (app, admin) = setup().await;
    for (alias, orders) in [
        ("pretixscan", true),
        ("pretixscan_online_noorders", false),
        ("pretixscan_online_kiosk", false),
    ] {
        let token = initialized_device(
            &app,
            &admin,
            json!({"name": alias, "all_events": true, "security_profile": alias}),
        )
        .await;
        let r = call(&app, &token, "GET", ORDERS).await;
        assert_eq!(!denied_by_profile(&r), orders, "{alias}: {}", r.body);
        denied(&app, &token, OUTSIDE_CHECKIN).await;
        let info = call(&app, &token, "GET", "/api/v1/device/info").await;
        assert_eq!(info.status, 200, "{alias}");
        // Scanner apps act on pretix's literal names.
        assert_eq!(info.body["device"]["security_profile"], alias);
    }
}

#[tokio::test]
async fn the_full_profile_allows_everything_within_the_device_permissions() {
    let (app, admin) = setup().await;
    let token = initialized_device(&app, &admin, json!({"name": "F", "all_events": true})).await;
    for (m, path) in OUTSIDE_CHECKIN {
        let r = call(&app, &token, m, path).await;
        assert!(!denied_by_profile(&r), "{m} {path}: {}", r.body);
    }
    // Vouchers stay closed to devices, by their permissions.
    let r = call(
        &app,
        &token,
        "GET",
        "/api/v1/organizers/acme/events/conf/vouchers/",
    )
    .await;
    assert_eq!(r.status, 403);
}

struct BadgePrinter;

impl Plugin for BadgePrinter {
    fn name(&self) -> &str {
        "badges"
    }
    fn version(&self) -> &str {
        "1.0.0"
    }
    fn description(&self) -> &str {
        "Badge printing"
    }
    fn device_profiles(&self) -> Vec<DeviceProfile> {
        vec![DeviceProfile::allow_list(
            "badge_printer",
            "Prints badges only.",
            [("GET", "/api/v1/device/info"), ("GET", "events/")],
        )]
    }
}

#[tokio::test]
async fn a_plugin_registers_a_profile_devices_can_be_given() {
    let app = TestApp::spawn_app(|_| {}, |app| app.plugin(BadgePrinter)).await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    let admin = app.device_admin_token("acme").await;
    let token = initialized_device(
        &app,
        &admin,
        json!({"name": "Printer", "all_events": true, "security_profile": "badge_printer"}),
    )
    .await;
    let events = call(&app, &token, "GET", "/api/v1/organizers/acme/events/").await;
    assert_eq!(events.status, 200, "{}", events.body);
    let info = call(&app, &token, "GET", "/api/v1/device/info").await;
    assert_eq!(info.body["device"]["security_profile"], "badge_printer");
    denied(
        &app,
        &token,
        &[("GET", ORDERS), ("POST", "/api/v1/device/roll")],
    )
    .await;

    // Without the plugin the name is unknown.
    let (plain, plain_admin) = setup().await;
    let r = plain
        .post(
            "/api/v1/organizers/acme/devices/",
            &plain_admin,
            json!({"name": "P", "security_profile": "badge_printer"}),
        )
        .await;
    assert_eq!(r.status, 400);
    let _: &Value = &r.body["security_profile"];
    assert!(r.body["security_profile"].is_array(), "{}", r.body);
}
