//! Conditional GET of the catalogue lists scanners sync: items, categories and questions
//! answer 304 to `If-Modified-Since` only while nothing they show changed.

use std::time::Duration;

use serde_json::json;
use tessera_tests::{Reply, TestApp};

use crate::selling_support::{EVENT, shop};

async fn get_since(app: &TestApp, path: &str, token: &str, since: Option<&str>) -> Reply {
    let auth = format!("Token {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    if let Some(s) = since {
        headers.push(("If-Modified-Since", s));
    }
    app.raw(poem::http::Method::GET, path, &headers, Vec::new())
        .await
}

/// Waits until the last change's second is over, then answers the list's `Last-Modified`.
async fn last_modified(app: &TestApp, path: &str, token: &str) -> String {
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let r = get_since(app, path, token, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.header("last-modified").expect("Last-Modified").to_owned()
}

#[tokio::test]
async fn catalogue_lists_answer_304_while_unchanged_and_200_after_a_change() {
    let s = shop(None).await;
    let (app, token) = (&s.app, s.token.as_str());
    let items = format!("{EVENT}/items/");
    let categories = format!("{EVENT}/categories/");
    let questions = format!("{EVENT}/questions/");

    let since = last_modified(app, &items, token).await;
    for path in [&items, &categories, &questions] {
        let r = get_since(app, path, token, Some(&since)).await;
        assert_eq!(r.status, 304, "{path}: {}", r.body);
        assert_eq!(r.body, serde_json::Value::Null);
    }
    let stale = "Mon, 01 Jan 2001 00:00:00 GMT";
    assert_eq!(get_since(app, &items, token, Some(stale)).await.status, 200);
    assert_eq!(
        get_since(app, &items, token, Some("not a date"))
            .await
            .status,
        200
    );

    let changed = app
        .patch(
            &format!("{EVENT}/items/{}/", s.ticket),
            token,
            json!({"name": {"en": "Day ticket"}}),
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let r = get_since(app, &items, token, Some(&since)).await;
    assert_eq!(r.status, 200, "an item changed");
    assert_eq!(r.body["results"][0]["name"]["en"], "Day ticket");

    let since = last_modified(app, &categories, token).await;
    let category = app
        .post(&categories, token, json!({"name": {"en": "Extras"}}))
        .await;
    assert_eq!(category.status, 201, "{}", category.body);
    let r = get_since(app, &categories, token, Some(&since)).await;
    assert_eq!(r.status, 200, "a category was added");
    assert_eq!(r.body["count"], 1);

    let since = last_modified(app, &questions, token).await;
    let question = app
        .post(
            &questions,
            token,
            json!({"question": {"en": "Diet?"}, "type": "S", "items": [s.ticket]}),
        )
        .await;
    assert_eq!(question.status, 201, "{}", question.body);
    let r = get_since(app, &questions, token, Some(&since)).await;
    assert_eq!(r.status, 200, "a question was added");
    assert_eq!(r.body["count"], 1);
    assert_eq!(
        get_since(
            app,
            &questions,
            token,
            Some(&last_modified(app, &questions, token).await)
        )
        .await
        .status,
        304
    );
}
