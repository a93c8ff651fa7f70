//! The device protocol: initialize, update, roll, revoke, info, version, and what a device
//! may do with its token.

use poem::http::Method;
use serde_json::{Value, json};
use tessera_tests::{Reply, TestApp};

const DEVICES: &str = "/api/v1/organizers/acme/devices/";

/// Sends a request as a device (`Authorization: Device <token>`).
pub async fn as_device(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Reply {
    let auth = format!("Device {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    let bytes = match body {
        Some(b) => {
            headers.push(("Content-Type", "application/json"));
            b.to_string().into_bytes()
        }
        None => Vec::new(),
    };
    app.raw(method, path, &headers, bytes).await
}

/// The body of `device/initialize` with this token.
pub fn init_body(token: &str) -> Value {
    json!({
        "token": token,
        "hardware_brand": "Zebra",
        "hardware_model": "TC25",
        "software_brand": "pretixSCAN Android",
        "software_version": "1.20.0",
        "os_name": "Android",
        "os_version": "11",
        "info": {"battery": 80}
    })
}

/// Creates a device of `acme` with `body` (a team token with organizer settings permission
/// in `admin`); gives its `device_id` and initialization token.
pub async fn new_device(app: &TestApp, admin: &str, body: Value) -> (i64, String) {
    let r = app.post(DEVICES, admin, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    (
        r.body["device_id"].as_i64().expect("device_id"),
        r.body["initialization_token"]
            .as_str()
            .expect("token")
            .to_owned(),
    )
}

/// Initializes with this token; the answer.
pub async fn initialize(app: &TestApp, token: &str) -> Reply {
    app.call(
        Method::POST,
        "/api/v1/device/initialize",
        None,
        Some(init_body(token)),
    )
    .await
}

/// Creates and initializes a device of `acme`; gives its API token.
pub async fn initialized_device(app: &TestApp, admin: &str, body: Value) -> String {
    let (_, token) = new_device(app, admin, body).await;
    let r = initialize(app, &token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["api_token"].as_str().expect("api_token").to_owned()
}

/// An app with organizer `acme`, events `conf` and `expo`, and an organizer-settings token.
pub async fn setup() -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    app.event("acme", "expo").await;
    let token = app.device_admin_token("acme").await;
    (app, token)
}

#[tokio::test]
async fn a_device_initializes_once_and_gets_an_api_token() {
    let (app, admin) = setup().await;
    let gate = app
        .post(
            "/api/v1/organizers/acme/gates/",
            &admin,
            json!({"name": "North", "identifier": "NORTH"}),
        )
        .await;
    let gate_id = gate.body["id"].as_i64().expect("gate");
    let (device_id, token) = new_device(
        &app,
        &admin,
        json!({"name": "Entrance", "all_events": true, "gate": gate_id, "security_profile": "service_checkin"}),
    )
    .await;
    let r = initialize(&app, &token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["organizer"], "acme");
    assert_eq!(r.body["device_id"], device_id);
    assert_eq!(r.body["name"], "Entrance");
    assert_eq!(r.body["security_profile"], "pretixscan");
    assert_eq!(
        r.body["gate"],
        json!({"id": gate_id, "name": "North", "identifier": "NORTH"})
    );
    let api_token = r.body["api_token"].as_str().expect("api_token");
    assert_eq!(api_token.len(), 64);
    assert!(
        api_token
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    );
    assert_eq!(r.body["unique_serial"].as_str().map(str::len), Some(16));

    let again = initialize(&app, &token).await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body,
        json!({"token": ["This initialization token has already been used."]})
    );

    let shown = app.get(&format!("{DEVICES}{device_id}/"), &admin).await;
    assert_eq!(shown.body["initialization_token"], json!(null));
    assert!(shown.body["initialized"].is_string(), "{}", shown.body);
    assert_eq!(shown.body["hardware_brand"], "Zebra");
    assert_eq!(shown.body["software_version"], "1.20.0");
    assert_eq!(shown.body["os_name"], "Android");

    let info = as_device(&app, Method::GET, "/api/v1/device/info", api_token, None).await;
    assert_eq!(info.status, 200, "{}", info.body);
    assert_eq!(info.body["device"]["device_id"], device_id);
    assert!(info.body["device"].get("api_token").is_none());
}

#[tokio::test]
async fn initialization_refuses_unknown_tokens_and_missing_fields() {
    let (app, _) = setup().await;
    let r = initialize(&app, "abcdefghijklmnop").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"token": ["Unknown initialization token."]}));

    for field in [
        "token",
        "hardware_brand",
        "hardware_model",
        "software_brand",
        "software_version",
    ] {
        let mut body = init_body("abcdefghijklmnop");
        body.as_object_mut().expect("object").remove(field);
        let r = app
            .call(Method::POST, "/api/v1/device/initialize", None, Some(body))
            .await;
        assert_eq!(r.status, 400, "{field}: {}", r.body);
        assert!(r.body[field].is_array(), "{field}: {}", r.body);
    }

    let mut long = init_body("abcdefghijklmnop");
    long["hardware_model"] = json!("x".repeat(191));
    let r = app
        .call(Method::POST, "/api/v1/device/initialize", None, Some(long))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["hardware_model"].is_array(), "{}", r.body);
}

#[tokio::test]
async fn a_revoked_initialization_token_is_refused() {
    let (app, admin) = setup().await;
    let (device_id, token) = new_device(&app, &admin, json!({"name": "Lost"})).await;
    app.patch(
        &format!("{DEVICES}{device_id}/"),
        &admin,
        json!({"revoked": true}),
    )
    .await;
    let r = initialize(&app, &token).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"token": ["This initialization token has been revoked."]})
    );
}

#[tokio::test]
async fn an_invalid_public_key_is_refused_and_a_set_one_cannot_change() {
    let (app, admin) = setup().await;
    let (_, token) = new_device(&app, &admin, json!({"name": "Kiosk"})).await;
    let mut body = init_body(&token);
    body["rsa_pubkey"] = json!("not a key");
    let r = app
        .call(
            Method::POST,
            "/api/v1/device/initialize",
            None,
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"rsa_pubkey": ["Not a valid public key."]}));

    body["rsa_pubkey"] = json!(KEY_A);
    let r = app
        .call(Method::POST, "/api/v1/device/initialize", None, Some(body))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let api = r.body["api_token"].as_str().expect("token").to_owned();

    let mut update = init_body("");
    update.as_object_mut().expect("object").remove("token");
    update["software_version"] = json!("1.21.0");
    update["rsa_pubkey"] = json!(KEY_A);
    let r = as_device(
        &app,
        Method::POST,
        "/api/v1/device/update",
        &api,
        Some(update.clone()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Kiosk");
    assert!(r.body.get("api_token").is_none());

    update["rsa_pubkey"] = json!(KEY_B);
    let r = as_device(
        &app,
        Method::POST,
        "/api/v1/device/update",
        &api,
        Some(update),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"rsa_pubkey": ["You cannot change the rsa_pubkey of the device once it is set."]})
    );
    let shown = app.get(&format!("{DEVICES}1/"), &admin).await;
    assert_eq!(shown.body["software_version"], "1.21.0");
}

#[tokio::test]
async fn two_devices_initializing_with_one_token_at_once_get_one_api_token() {
    let (app, admin) = setup().await;
    for round in 0..5 {
        let (_, token) = new_device(&app, &admin, json!({"name": format!("D{round}")})).await;
        let (a, b) = tokio::join!(initialize(&app, &token), initialize(&app, &token));
        let mut statuses = [a.status, b.status];
        statuses.sort();
        assert_eq!(statuses, [200, 400], "{} {}", a.body, b.body);
        let refused = if a.status == 400 { &a } else { &b };
        assert_eq!(
            refused.body,
            json!({"token": ["This initialization token has already been used."]})
        );
    }
}

#[tokio::test]
async fn a_rolled_token_replaces_the_old_one_at_once() {
    let (app, admin) = setup().await;
    let old = initialized_device(&app, &admin, json!({"name": "Roller"})).await;
    let r = as_device(&app, Method::POST, "/api/v1/device/roll", &old, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let new = r.body["api_token"].as_str().expect("token").to_owned();
    assert_ne!(new, old);
    let r = as_device(&app, Method::GET, "/api/v1/device/info", &old, None).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body, json!({"detail": "Invalid token."}));
    assert_eq!(r.header("www-authenticate"), Some("Device"));
    let r = as_device(&app, Method::GET, "/api/v1/device/info", &new, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn a_revoked_device_is_refused_for_ever() {
    let (app, admin) = setup().await;
    let token = initialized_device(&app, &admin, json!({"name": "Gone", "all_events": true})).await;
    let r = as_device(&app, Method::POST, "/api/v1/device/revoke", &token, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "Gone");
    for (method, path) in [
        (Method::GET, "/api/v1/device/info"),
        (Method::POST, "/api/v1/device/roll"),
        (Method::GET, "/api/v1/organizers/acme/events/"),
    ] {
        let r = as_device(&app, method, path, &token, None).await;
        assert_eq!(r.status, 401, "{path}");
        assert_eq!(r.body, json!({"detail": "Device access has been revoked."}));
    }
    let shown = app.get(&format!("{DEVICES}1/"), &admin).await;
    assert_eq!(shown.body["revoked"], true);
}

#[tokio::test]
async fn an_initialization_token_used_as_api_token_says_the_device_is_not_initialized() {
    let (app, admin) = setup().await;
    let (_, token) = new_device(&app, &admin, json!({"name": "New"})).await;
    let r = as_device(&app, Method::GET, "/api/v1/device/info", &token, None).await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.body,
        json!({"detail": "Device has not been initialized."})
    );
    let r = as_device(
        &app,
        Method::GET,
        "/api/v1/organizers/acme/events/",
        &token,
        None,
    )
    .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        r.body,
        json!({"detail": "Device has not been initialized."})
    );
    let r = as_device(&app, Method::GET, "/api/v1/device/info", "nonsense", None).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body, json!({"detail": "Invalid token."}));
}

#[tokio::test]
async fn device_info_and_version_report_a_pretix_version_with_checkinrpc() {
    let (app, admin) = setup().await;
    let token = initialized_device(&app, &admin, json!({"name": "Info"})).await;
    let info = as_device(&app, Method::GET, "/api/v1/device/info", &token, None).await;
    assert_eq!(info.status, 200, "{}", info.body);
    let numeric = info.body["server"]["version"]["pretix_numeric"]
        .as_i64()
        .expect("numeric");
    assert!(numeric >= 40_120_001_001, "{numeric}");
    assert_eq!(info.body["server"]["version"]["pretix"], "2025.7.0");
    assert_eq!(numeric, 20_250_070_005_000);

    let version = as_device(&app, Method::GET, "/api/v1/version", &token, None).await;
    assert_eq!(version.status, 200, "{}", version.body);
    assert_eq!(version.body["pretix_numeric"], numeric);
    assert!(version.body["tessera"].is_string());
    assert_eq!(
        app.call(Method::GET, "/api/v1/version", None, None)
            .await
            .status,
        401
    );
    // Team tokens are not device tokens.
    let r = app.get("/api/v1/device/info", &admin).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Device"));
}

#[tokio::test]
async fn a_device_reads_events_and_orders_but_never_vouchers_or_changes_to_products() {
    let (app, admin) = setup().await;
    app.event("acme", "hidden").await;
    let token = initialized_device(
        &app,
        &admin,
        json!({"name": "Scanner", "limit_events": ["conf", "expo"]}),
    )
    .await;
    let get = async |path: &str| as_device(&app, Method::GET, path, &token, None).await;

    let events = get("/api/v1/organizers/acme/events/").await;
    assert_eq!(events.status, 200, "{}", events.body);
    let slugs: Vec<&str> = events.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|e| e["slug"].as_str())
        .collect();
    assert_eq!(slugs, ["conf", "expo"]);
    assert_eq!(
        get("/api/v1/organizers/acme/events/conf/").await.status,
        200
    );
    assert_eq!(
        get("/api/v1/organizers/acme/events/conf/items/")
            .await
            .status,
        200
    );
    assert_eq!(
        get("/api/v1/organizers/acme/events/conf/settings/")
            .await
            .status,
        200
    );
    assert_eq!(
        get("/api/v1/organizers/acme/events/conf/orders/")
            .await
            .status,
        200
    );
    assert_eq!(get("/api/v1/organizers/acme/giftcards/").await.status, 200);

    assert_eq!(
        get("/api/v1/organizers/acme/events/hidden/").await.status,
        403
    );
    assert_eq!(
        get("/api/v1/organizers/acme/events/hidden/orders/")
            .await
            .status,
        403
    );
    assert_eq!(
        get("/api/v1/organizers/acme/events/conf/vouchers/")
            .await
            .status,
        403
    );
    assert_eq!(get("/api/v1/organizers/acme/devices/").await.status, 403);
    assert_eq!(get("/api/v1/organizers/acme/teams/").await.status, 403);

    let item = as_device(
        &app,
        Method::DELETE,
        "/api/v1/organizers/acme/events/conf/items/1/",
        &token,
        None,
    )
    .await;
    assert_eq!(item.status, 403, "{}", item.body);
    let event = as_device(
        &app,
        Method::PATCH,
        "/api/v1/organizers/acme/events/conf/",
        &token,
        Some(json!({"name": {"en": "Renamed"}})),
    )
    .await;
    assert_eq!(event.status, 403, "{}", event.body);
    let voucher = as_device(
        &app,
        Method::DELETE,
        "/api/v1/organizers/acme/events/conf/vouchers/1/",
        &token,
        None,
    )
    .await;
    assert_eq!(voucher.status, 403, "{}", voucher.body);

    app.organizer("other").await;
    assert_eq!(get("/api/v1/organizers/other/events/").await.status, 403);
}

const KEY_A: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyeh
kd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ
0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdg
cKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbc
mwIDAQAB
-----END PUBLIC KEY-----
";

const KEY_B: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwJ5y3vYcIzZSrVQkPR2x
4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u
+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyeh
kd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ
0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdg
cKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbc
mwIDAQAB
-----END PUBLIC KEY-----
";
