use tessera_tests::TestApp;

/// The document of the core with the plugins the `tessera` binary is built with.
fn document() -> serde_json::Value {
    let mut plugins = tessera::plugin::PluginRegistry::default();
    plugins.register(std::sync::Arc::new(
        tessera_plugin_banktransfer::BankTransfer,
    ));
    tessera::openapi_document(&plugins)
}

#[test]
fn every_operation_has_a_summary_security_and_error_answers() {
    let doc = document();
    let paths = doc["paths"].as_object().expect("paths");
    assert!(
        paths.keys().all(|p| p.ends_with('/')
            || ["/api/v1/upload", "/api/v1/me", "/api/v1/version"].contains(&p.as_str())
            || p.starts_with("/api/v1/oauth/")
            || p.starts_with("/api/v1/device/")),
        "the spec's form has trailing slashes (upload, me, version, the OAuth and device \
         protocol paths have none)"
    );
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("operations") {
            let name = format!("{method} {path}");
            assert!(
                op["summary"].as_str().is_some_and(|s| !s.is_empty()),
                "{name}: summary"
            );
            // A device initializes with the token in its body, without authentication.
            if path == "/api/v1/device/initialize" {
                assert!(op.get("security").is_none(), "{name}: no security");
                continue;
            }
            assert!(
                op["security"].as_array().is_some_and(|s| !s.is_empty()),
                "{name}: security"
            );
            // The authorize page sends someone not signed in to the sign-in page (303).
            if path != "/api/v1/oauth/authorize" {
                assert!(op["responses"].get("401").is_some(), "{name}: 401");
            }
            // The OAuth token endpoints authenticate clients, and answer RFC 6749's errors.
            if !path.starts_with("/api/v1/oauth/") {
                assert!(op["responses"].get("403").is_some(), "{name}: 403");
            }
        }
    }
    let transact = &doc["paths"]["/api/v1/organizers/{organizer}/giftcards/{id}/transact/"]["post"];
    assert!(transact["responses"].get("409").is_some());
}

#[tokio::test]
async fn the_running_server_serves_the_document_and_a_ui() {
    let app = TestApp::spawn().await;
    let r = app
        .call(poem::http::Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, tessera::openapi_document(app.plugins()));
    let r = app
        .call(poem::http::Method::GET, "/docs/", None, None)
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .as_str()
            .is_some_and(|html| html.contains("SwaggerUIBundle"))
    );
}

#[test]
fn every_reference_in_the_document_resolves() {
    fn walk(doc: &serde_json::Value, value: &serde_json::Value, missing: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(|r| r.as_str()) {
                    let pointer = target.trim_start_matches('#');
                    if doc.pointer(pointer).is_none() {
                        missing.push(target.to_owned());
                    }
                }
                map.values().for_each(|v| walk(doc, v, missing));
            }
            serde_json::Value::Array(list) => list.iter().for_each(|v| walk(doc, v, missing)),
            _ => {}
        }
    }
    let doc = document();
    let mut missing = Vec::new();
    walk(&doc, &doc, &mut missing);
    assert!(missing.is_empty(), "{missing:?}");
    // The spec's error shapes: a 400 may nest field errors, or be `{"detail"}`.
    let field_error = &doc["components"]["schemas"]["FieldError"];
    assert!(
        field_error["anyOf"]
            .as_array()
            .is_some_and(|a| a.len() == 2)
    );
    let bad_query = &doc["paths"]["/api/v1/organizers/{organizer}/events/"]["get"]["responses"];
    assert_eq!(
        bad_query["400"]["$ref"],
        "#/components/responses/BadRequest"
    );
}
