//! Dynamic plugin libraries: loading the worked example, the checks that refuse broken
//! libraries, and calls across the boundary.

use serde_json::{Value, json};
use tessera::plugin::library::{LoadError, PluginLibrary, load_dir};
use tessera_tests::plugin_library;

const PAYLINK: &str = "tessera-plugin-paylink";
const FIXTURES: [&str; 3] = [
    "tessera-fixture-wrong-abi",
    "tessera-fixture-missing-symbol",
    "tessera-fixture-bad-manifest",
];

fn paylink() -> PluginLibrary {
    PluginLibrary::load(&plugin_library(PAYLINK)).expect("paylink loads")
}

fn refusal(package: &str) -> LoadError {
    PluginLibrary::load(&plugin_library(package)).expect_err("the library is refused")
}

fn payment_request(base_url: &str) -> Value {
    json!({
        "provider": "paylink",
        "organizer": "demo",
        "event": "conf",
        "order_code": "ABC12",
        "amount": "23.00",
        "currency": "EUR",
        "sales_channel": "web",
        "email": "buyer@example.org",
        "expires": "2030-01-01T00:00:00Z",
        "settings": {"paylink_base_url": base_url},
        "default_payment_url": "https://tickets.example/demo/conf/order/ABC12/secret/pay/"
    })
}

fn links_request(body: Value, base_url: &str) -> Value {
    json!({
        "method": "POST",
        "path": "links/",
        "query": {},
        "body": body,
        "organizer": "demo",
        "event": "conf",
        "settings": {"paylink_base_url": base_url},
        "permissions": ["can_view_orders"]
    })
}

#[test]
fn the_paylink_library_loads_with_its_manifest() {
    let path = plugin_library(PAYLINK);

    let library = PluginLibrary::load(&path).expect("paylink loads");

    assert_eq!(library.path(), path);
    let manifest = serde_json::to_value(library.manifest()).expect("a manifest in JSON");
    assert_eq!(manifest["name"], "paylink");
    assert_eq!(manifest["version"], "1.0.0");
    assert_eq!(
        manifest["description"],
        "Payment by a link to a hosted payment page"
    );
    assert_eq!(manifest["level"], "event");
    let setting = &manifest["settings"][0];
    assert_eq!(setting["key"], "paylink_base_url");
    assert_eq!(setting["type"], "url");
    assert_eq!(setting["default"], "");
    assert_eq!(setting["label"], "Payment page");
    assert_eq!(setting["validate"], true);
    assert_eq!(
        manifest["payment_providers"],
        json!([{"identifier": "paylink", "name": "Payment link"}])
    );
    let endpoint = &manifest["endpoints"][0];
    assert_eq!(endpoint["method"], "POST");
    assert_eq!(endpoint["path"], "links/");
    assert_eq!(endpoint["scope"], "event");
    assert_eq!(endpoint["permission"], "can_view_orders");
    assert_eq!(endpoint["operation"]["summary"], "Make a payment link");
}

#[test]
fn a_call_to_the_library_answers_in_json() {
    let library = paylink();
    let https = json!({"key": "paylink_base_url", "value": "https://pay.example/"});
    let http = json!({"key": "paylink_base_url", "value": "http://pay.example/"});

    assert_eq!(library.call("validate_setting", &https), Ok(Value::Null));
    assert_eq!(
        library.call("validate_setting", &http),
        Err("Use an https:// address.".into())
    );

    let url = "https://pay.example/p?order=ABC12&amount=23.00&currency=EUR";
    assert_eq!(
        library.call("payment.create", &payment_request("https://pay.example/p")),
        Ok(json!({
            "payment_url": url,
            "details": {"link": url},
            "instructions": format!("Pay at {url}.")
        }))
    );
    assert_eq!(
        library.call("payment.create", &payment_request("")),
        Err("The payment page is not configured.".into())
    );
    assert!(matches!(
        library.call("payment.refund", &json!({})),
        Err(message) if message.starts_with("invalid input: missing field `provider`")
    ));
    assert_eq!(
        library.call("no.such.method", &Value::Null),
        Err("unknown method".into())
    );
}

#[test]
fn the_paylink_endpoint_makes_links() {
    let library = paylink();
    let base = "https://pay.example/p";

    let made = library.call(
        "http",
        &links_request(json!({"amount": "10.00", "reference": "X 1"}), base),
    );
    let missing = library.call("http", &links_request(json!({"reference": "X"}), base));
    let unconfigured = library.call(
        "http",
        &links_request(json!({"amount": "10.00", "reference": "X"}), ""),
    );

    assert_eq!(
        made,
        Ok(
            json!({"status": 200, "body": {"url": "https://pay.example/p?reference=X%201&amount=10.00"}})
        )
    );
    assert_eq!(
        missing,
        Ok(json!({"status": 400, "body": {"amount": ["This field is required."]}}))
    );
    assert_eq!(
        unconfigured,
        Ok(json!({"status": 400, "body": {"detail": "The payment page is not configured."}}))
    );
}

#[test]
fn a_library_can_be_called_from_many_threads_at_once() {
    let library = paylink();
    let check = json!({"key": "paylink_base_url", "value": "https://pay.example/"});

    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| library.call("validate_setting", &check)))
            .collect();
        for call in calls {
            assert_eq!(call.join().expect("no panic"), Ok(Value::Null));
        }
    });
}

#[test]
fn a_library_with_another_abi_version_is_refused() {
    let error = refusal("tessera-fixture-wrong-abi");

    assert!(
        matches!(
            error,
            LoadError::AbiVersion {
                found: 999,
                expected: 1
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("ABI version 999"), "{error}");
}

#[test]
fn a_library_without_a_required_symbol_is_refused() {
    let error = refusal("tessera-fixture-missing-symbol");

    assert!(
        matches!(error, LoadError::MissingSymbol("tessera_plugin_call")),
        "{error}"
    );
}

#[test]
fn a_library_with_a_bad_manifest_is_refused() {
    let error = refusal("tessera-fixture-bad-manifest");

    assert!(matches!(error, LoadError::Manifest(_)), "{error}");
    assert!(error.to_string().starts_with("bad manifest: "), "{error}");
}

#[test]
fn a_file_that_is_not_a_library_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("libnotes.so");
    std::fs::write(&path, "just some notes").expect("a file");

    let error = PluginLibrary::load(&path).expect_err("the file is refused");

    assert!(matches!(error, LoadError::Open(_)), "{error}");
}

#[test]
fn load_dir_skips_refused_libraries_and_keeps_the_good_ones() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for package in FIXTURES.into_iter().chain([PAYLINK]) {
        let built = plugin_library(package);
        let name = built.file_name().expect("a file name");
        std::fs::copy(&built, dir.path().join(name)).expect("a copy of the library");
    }
    std::fs::write(dir.path().join("garbage.so"), "not a library").expect("a file");
    std::fs::write(dir.path().join("README.txt"), "not even named like one").expect("a file");

    let libraries = load_dir(dir.path());

    let names: Vec<&str> = libraries
        .iter()
        .map(|l| l.manifest().name.as_str())
        .collect();
    assert_eq!(names, ["paylink"]);
    assert!(libraries[0].path().starts_with(dir.path()));
}

#[test]
fn load_dir_of_a_missing_directory_finds_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");

    assert!(load_dir(&dir.path().join("missing")).is_empty());
}

/// A directory (mode 0755) holding a copy (mode 0644) of the paylink library; the copy's path.
fn paylink_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let built = plugin_library(PAYLINK);
    let copy = dir.path().join(built.file_name().expect("a file name"));
    std::fs::copy(&built, &copy).expect("a copy of the library");
    chmod(dir.path(), 0o755);
    chmod(&copy, 0o644);
    (dir, copy)
}

fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn loaded_names(dir: &std::path::Path) -> Vec<String> {
    load_dir(dir)
        .iter()
        .map(|l| l.manifest().name.clone())
        .collect()
}

#[test]
fn a_plugin_directory_others_can_write_to_is_not_loaded_at_all() {
    let (dir, _) = paylink_copy();
    assert_eq!(loaded_names(dir.path()), ["paylink"], "mode 0755 loads");

    for mode in [0o777, 0o775, 0o757] {
        chmod(dir.path(), mode);

        assert!(loaded_names(dir.path()).is_empty(), "mode {mode:o}");
    }
}

#[test]
fn a_library_others_can_write_to_is_refused_before_it_is_opened() {
    let (dir, copy) = paylink_copy();
    assert!(PluginLibrary::load(&copy).is_ok(), "mode 0644 loads");

    for mode in [0o666, 0o664, 0o646, 0o777] {
        chmod(&copy, mode);

        let error = PluginLibrary::load(&copy).expect_err("the library is refused");
        assert!(matches!(error, LoadError::Permissions(_)), "{error}");
        assert!(
            error.to_string().contains("writable by group or others"),
            "{error}"
        );
        assert!(loaded_names(dir.path()).is_empty(), "mode {mode:o}");
    }
}

#[test]
fn a_link_to_a_library_in_a_directory_others_can_write_to_is_refused() {
    let (elsewhere, copy) = paylink_copy();
    chmod(elsewhere.path(), 0o777);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let link = dir.path().join(copy.file_name().expect("a file name"));
    std::os::unix::fs::symlink(&copy, &link).expect("a symbolic link");

    let error = PluginLibrary::load(&link).expect_err("the library is refused");

    assert!(matches!(error, LoadError::Permissions(_)), "{error}");
    assert!(loaded_names(dir.path()).is_empty());
}

#[test]
fn a_library_owned_by_another_user_is_refused() {
    let (dir, copy) = paylink_copy();
    // Only root may give a file away; elsewhere the check cannot be arranged.
    if std::os::unix::fs::chown(&copy, Some(65534), None).is_err() {
        return;
    }

    let error = PluginLibrary::load(&copy).expect_err("the library is refused");

    assert!(matches!(error, LoadError::Permissions(_)), "{error}");
    assert!(error.to_string().contains("owned by uid 65534"), "{error}");
    assert!(loaded_names(dir.path()).is_empty());
}

#[tokio::test]
async fn a_server_with_a_plugin_directory_others_can_write_to_starts_without_its_plugins() {
    let (dir, _) = paylink_copy();
    chmod(dir.path(), 0o777);
    let plugin_dir = dir.path().to_owned();

    let app = tessera_tests::TestApp::spawn_with(move |c| c.plugin_dir = Some(plugin_dir)).await;

    assert!(!app.plugins().is_registered("paylink"));
    let organizers = app
        .call(poem::http::Method::GET, "/api/v1/organizers/", None, None)
        .await;
    assert_eq!(organizers.status, 401, "{}", organizers.body);
}
