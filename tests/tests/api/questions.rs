use std::collections::HashMap;

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::PermissionSet;
use tessera_tests::TestApp;

use crate::config_support::{add_event, add_item};

const QUESTIONS: &str = "/api/v1/organizers/acme/events/conf/questions/";

struct Setup {
    app: TestApp,
    org: i64,
    event: i64,
    token: String,
}

async fn setup() -> Setup {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf", false).await;
    let token = app.token("acme", &["can_change_items"]).await;
    Setup {
        app,
        org,
        event,
        token,
    }
}

fn one(id: i64) -> String {
    format!("{QUESTIONS}{id}/")
}

fn options_of(id: i64) -> String {
    format!("{QUESTIONS}{id}/options/")
}

/// Creates a question, expecting 201; returns its body.
async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let r = app.post(QUESTIONS, token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

fn id_of(body: &Value) -> i64 {
    body["id"].as_i64().expect("id")
}

fn sizes() -> Value {
    json!([{"answer": {"en": "S"}}, {"answer": {"en": "M"}}, {"answer": {"en": "L"}}])
}

fn identifiers(body: &Value) -> Vec<String> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|q| q["identifier"].as_str().expect("identifier").to_owned())
        .collect()
}

#[tokio::test]
async fn a_question_is_created_shown_changed_replaced_and_deleted() {
    let s = setup().await;
    let item = add_item(&s.app, s.event, None, None).await;
    let created = create(
        &s.app,
        &s.token,
        json!({
            "question": {"en": "Age", "de": "Alter"},
            "help_text": {"en": "In years"},
            "type": "N",
            "required": true,
            "items": [item],
            "position": 4,
            "identifier": "age",
            "print_on_invoice": true,
            "valid_number_min": "18",
            "valid_number_max": "120.5",
        }),
    )
    .await;
    assert_eq!(created["question"], json!({"en": "Age", "de": "Alter"}));
    assert_eq!(created["help_text"], json!({"en": "In years"}));
    assert_eq!(created["type"], "N");
    assert_eq!(created["required"], true);
    assert_eq!(created["items"], json!([item]));
    assert_eq!(created["options"], json!([]));
    assert_eq!(created["position"], 4);
    assert_eq!(created["ask_during_checkin"], false);
    assert_eq!(created["identifier"], "age");
    assert_eq!(created["hidden"], false);
    assert_eq!(created["print_on_invoice"], true);
    assert_eq!(created["dependency_question"], json!(null));
    assert_eq!(created["dependency_values"], json!([]));
    assert_eq!(created["valid_number_min"], "18.000000");
    assert_eq!(created["valid_number_max"], "120.500000");
    for field in [
        "valid_date_min",
        "valid_date_max",
        "valid_datetime_min",
        "valid_datetime_max",
        "valid_string_length_max",
    ] {
        assert_eq!(created[field], json!(null), "{field}");
    }
    let id = id_of(&created);

    let r = s.app.get(&one(id), &s.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, created);

    let r = s
        .app
        .patch(
            &one(id),
            &s.token,
            json!({"hidden": true, "help_text": null, "valid_number_max": null, "items": []}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["hidden"], true);
    assert_eq!(r.body["help_text"], json!(null));
    assert_eq!(r.body["valid_number_max"], json!(null));
    assert_eq!(r.body["valid_number_min"], "18.000000");
    assert_eq!(r.body["items"], json!([]));
    assert_eq!(r.body["required"], true);
    assert_eq!(r.body["identifier"], "age");

    let r = s
        .app
        .put(
            &one(id),
            &s.token,
            json!({"question": {"en": "Birthday"}, "type": "D", "valid_date_min": "1900-01-01"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["question"], json!({"en": "Birthday"}));
    assert_eq!(r.body["type"], "D");
    assert_eq!(r.body["required"], false);
    assert_eq!(r.body["hidden"], false);
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["valid_number_min"], json!(null));
    assert_eq!(r.body["valid_date_min"], "1900-01-01");
    assert_eq!(
        r.body["identifier"], "age",
        "a PUT without identifier keeps it"
    );

    assert_eq!(s.app.delete(&one(id), &s.token).await.status, 204);
    assert_eq!(s.app.get(&one(id), &s.token).await.status, 403);
    assert_eq!(s.app.delete(&one(id), &s.token).await.status, 403);
    assert_eq!(s.app.get(QUESTIONS, &s.token).await.body["count"], 0);
}

#[tokio::test]
async fn a_choice_question_is_created_with_its_options_and_generated_identifiers() {
    let s = setup().await;
    let created = create(
        &s.app,
        &s.token,
        json!({
            "question": {"en": "T-shirt size"},
            "type": "C",
            "options": [
                {"answer": {"en": "S"}},
                {"answer": {"en": "M"}, "identifier": "medium"},
                {"answer": {"en": "L"}, "position": 10},
            ],
        }),
    )
    .await;
    let identifier = created["identifier"].as_str().expect("identifier");
    assert_eq!(identifier.len(), 8);
    assert!(
        identifier
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "{identifier}"
    );
    let options = created["options"].as_array().expect("options");
    assert_eq!(options.len(), 3);
    assert_eq!(options[0]["answer"], json!({"en": "S"}));
    assert_eq!(options[0]["position"], 0);
    assert_eq!(options[1]["identifier"], "medium");
    assert_eq!(options[1]["position"], 1);
    assert_eq!(options[2]["position"], 10);
    let generated = options[0]["identifier"].as_str().expect("identifier");
    assert_eq!(generated.len(), 8);
    assert_ne!(options[0]["identifier"], options[2]["identifier"]);
    for o in options {
        assert!(o["id"].is_i64());
    }
    let r = s.app.get(&options_of(id_of(&created)), &s.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 3);
    assert_eq!(r.body["results"][1]["identifier"], "medium");
}

#[tokio::test]
async fn an_identifier_already_used_in_the_event_is_400_whatever_its_case() {
    let s = setup().await;
    create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "S", "identifier": "Shirt"}),
    )
    .await;
    let other = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "B"}, "type": "S"}),
    )
    .await;

    for taken in ["Shirt", "SHIRT", "shirt"] {
        let r = s
            .app
            .post(
                QUESTIONS,
                &s.token,
                json!({"question": {"en": "C"}, "type": "S", "identifier": taken}),
            )
            .await;
        assert_eq!(r.status, 400, "{taken}");
        assert!(r.body["identifier"][0].is_string(), "{}", r.body);
    }
    let r = s
        .app
        .patch(
            &one(id_of(&other)),
            &s.token,
            json!({"identifier": "shirt"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["identifier"][0].is_string());

    let r = s
        .app
        .patch(
            &one(id_of(&other)),
            &s.token,
            json!({"identifier": "has space"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["identifier"][0].is_string());

    let same = other["identifier"].clone();
    let r = s
        .app
        .patch(&one(id_of(&other)), &s.token, json!({"identifier": same}))
        .await;
    assert_eq!(
        r.status, 200,
        "its own identifier is no conflict: {}",
        r.body
    );

    let elsewhere = add_event(&s.app, s.org, "elsewhere", false).await;
    assert!(elsewhere > 0);
    let r = s
        .app
        .post(
            "/api/v1/organizers/acme/events/elsewhere/questions/",
            &s.token,
            json!({"question": {"en": "A"}, "type": "S", "identifier": "Shirt"}),
        )
        .await;
    assert_eq!(r.status, 201, "another event may use it: {}", r.body);
}

#[tokio::test]
async fn options_sent_with_put_or_patch_replace_the_list_keeping_the_ids_sent() {
    let s = setup().await;
    let created = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "Size"}, "type": "M", "options": sizes()}),
    )
    .await;
    let id = id_of(&created);
    let small = created["options"][0].clone();
    let large = created["options"][2].clone();

    let r = s
        .app
        .patch(
            &one(id),
            &s.token,
            json!({"options": [
                {"id": large["id"], "answer": {"en": "Large"}, "position": 0},
                {"answer": {"en": "XL"}, "identifier": "xl", "position": 1},
            ]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let options = r.body["options"].as_array().expect("options");
    assert_eq!(options.len(), 2);
    assert_eq!(options[0]["id"], large["id"]);
    assert_eq!(options[0]["identifier"], large["identifier"]);
    assert_eq!(options[0]["answer"], json!({"en": "Large"}));
    assert_eq!(options[1]["identifier"], "xl");
    assert_ne!(options[1]["id"], small["id"]);
    let r = s.app.get(&options_of(id), &s.token).await;
    assert_eq!(r.body["count"], 2);
    let gone = format!("{}{}/", options_of(id), small["id"]);
    assert_eq!(s.app.get(&gone, &s.token).await.status, 403);

    let r = s
        .app
        .patch(&one(id), &s.token, json!({"position": 7}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["options"].as_array().expect("options").len(),
        2,
        "a PATCH without options keeps them"
    );

    let r = s
        .app
        .put(
            &one(id),
            &s.token,
            json!({"question": {"en": "Size"}, "type": "C", "options": [
                {"id": large["id"], "answer": {"en": "L"}, "identifier": "l"},
            ]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["options"][0]["id"], large["id"]);
    assert_eq!(r.body["options"][0]["identifier"], "l");
    assert_eq!(r.body["options"].as_array().expect("options").len(), 1);

    let r = s
        .app
        .put(
            &one(id),
            &s.token,
            json!({"question": {"en": "Size"}, "type": "C"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["options"][0]["identifier"], "l",
        "a PUT without options keeps them"
    );

    let r = s
        .app
        .patch(
            &one(id),
            &s.token,
            json!({"options": [{"id": 999_999, "answer": {"en": "?"}}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["options"][0].is_string(), "{}", r.body);
}

#[tokio::test]
async fn options_are_listed_created_changed_and_deleted_through_their_own_endpoints() {
    let s = setup().await;
    let q = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "Diet"}, "type": "C", "options": [{"answer": {"en": "Vegan"}, "identifier": "vegan"}]}),
        )
        .await,
    );
    let list = options_of(q);

    let r = s
        .app
        .post(
            &list,
            &s.token,
            json!({"answer": {"en": "Omnivore"}, "position": 2}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["position"], 2);
    assert_eq!(r.body["identifier"].as_str().expect("identifier").len(), 8);
    let option = format!("{list}{}/", r.body["id"]);

    let r = s
        .app
        .post(
            &list,
            &s.token,
            json!({"answer": {"en": "Again"}, "identifier": "vegan"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["identifier"][0].is_string());

    let r = s.app.get(&option, &s.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["answer"], json!({"en": "Omnivore"}));

    let r = s
        .app
        .patch(&option, &s.token, json!({"identifier": "omni"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["identifier"], "omni");
    assert_eq!(r.body["answer"], json!({"en": "Omnivore"}));

    let r = s
        .app
        .patch(&option, &s.token, json!({"identifier": "vegan"}))
        .await;
    assert_eq!(r.status, 400);

    let r = s
        .app
        .put(&option, &s.token, json!({"answer": {"en": "Everything"}}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["answer"], json!({"en": "Everything"}));
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["identifier"], "omni");

    let r = s.app.get(&list, &s.token).await;
    assert_eq!(r.body["count"], 2);
    assert_eq!(r.body["results"][0]["identifier"], "vegan");

    assert_eq!(s.app.delete(&option, &s.token).await.status, 204);
    assert_eq!(s.app.get(&option, &s.token).await.status, 403);
    let last = format!(
        "{list}{}/",
        s.app.get(&list, &s.token).await.body["results"][0]["id"]
    );
    let r = s.app.delete(&last, &s.token).await;
    assert_eq!(r.status, 403, "a choice question keeps its last option");
    assert!(r.body["detail"].is_string());

    let text = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "Name"}, "type": "S"}),
        )
        .await,
    );
    let r = s
        .app
        .post(&options_of(text), &s.token, json!({"answer": {"en": "x"}}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["non_field_errors"][0].is_string(), "{}", r.body);
    assert_eq!(
        s.app.get(&options_of(text), &s.token).await.body["count"],
        0
    );
}

#[tokio::test]
async fn an_option_of_another_question_is_not_reachable_through_this_one() {
    let s = setup().await;
    let a = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "options": sizes()}),
    )
    .await;
    let b = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "B"}, "type": "C", "options": sizes()}),
    )
    .await;
    let foreign = format!("{}{}/", options_of(id_of(&b)), a["options"][0]["id"]);
    assert_eq!(s.app.get(&foreign, &s.token).await.status, 403);
    assert_eq!(
        s.app
            .patch(&foreign, &s.token, json!({"position": 3}))
            .await
            .status,
        403
    );
    assert_eq!(s.app.delete(&foreign, &s.token).await.status, 403);
    assert_eq!(s.app.get(&options_of(999_999), &s.token).await.status, 403);
}

#[tokio::test]
async fn items_of_another_event_are_400() {
    let s = setup().await;
    let other = add_event(&s.app, s.org, "other", false).await;
    let foreign = add_item(&s.app, other, None, None).await;
    let own = add_item(&s.app, s.event, None, None).await;
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "A"}, "type": "S", "items": [own, foreign]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["items"][0].is_string(), "{}", r.body);
    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "S", "items": [own, own]}),
    )
    .await;
    assert_eq!(q["items"], json!([own]));
    let r = s
        .app
        .patch(&one(id_of(&q)), &s.token, json!({"items": [999_999]}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["items"][0].is_string());
}

#[tokio::test]
async fn options_are_only_for_choice_questions_and_a_choice_question_needs_one() {
    let s = setup().await;
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "A"}, "type": "S", "options": sizes()}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["options"][0].is_string(), "{}", r.body);

    for kind in ["C", "M"] {
        let r = s
            .app
            .post(
                QUESTIONS,
                &s.token,
                json!({"question": {"en": "A"}, "type": kind}),
            )
            .await;
        assert_eq!(r.status, 400, "{kind}");
        assert!(r.body["options"][0].is_string());
    }

    let choice = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "options": sizes()}),
    )
    .await;
    let r = s
        .app
        .patch(&one(id_of(&choice)), &s.token, json!({"type": "S"}))
        .await;
    assert_eq!(r.status, 400, "its options would be left over");
    assert!(r.body["options"][0].is_string());
    let r = s
        .app
        .patch(&one(id_of(&choice)), &s.token, json!({"options": []}))
        .await;
    assert_eq!(r.status, 400);
    let r = s
        .app
        .patch(
            &one(id_of(&choice)),
            &s.token,
            json!({"type": "S", "options": []}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["options"], json!([]));
    assert_eq!(
        s.app.get(&options_of(id_of(&choice)), &s.token).await.body["count"],
        0
    );
}

#[tokio::test]
async fn option_identifiers_are_unique_within_a_question() {
    let s = setup().await;
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "A"}, "type": "C", "options": [
                {"answer": {"en": "a"}, "identifier": "same"},
                {"answer": {"en": "b"}, "identifier": "same"},
            ]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["options"][0]
            .as_str()
            .expect("message")
            .starts_with("Entry 2")
    );

    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "options": [{"answer": {"en": "a"}, "identifier": "same"}]}),
    )
    .await;
    let kept = q["options"][0]["id"].clone();
    let r = s
        .app
        .patch(
            &one(id_of(&q)),
            &s.token,
            json!({"options": [{"id": kept, "answer": {"en": "a"}}, {"answer": {"en": "b"}, "identifier": "same"}]}),
        )
        .await;
    assert_eq!(
        r.status, 400,
        "the kept option keeps its identifier: {}",
        r.body
    );

    create(
        &s.app,
        &s.token,
        json!({"question": {"en": "B"}, "type": "C", "options": [{"answer": {"en": "a"}, "identifier": "same"}]}),
    )
    .await;
}

#[tokio::test]
async fn bounds_must_be_valid_and_minimums_not_above_maximums() {
    let s = setup().await;
    let cases = [
        (
            json!({"valid_number_min": "10", "valid_number_max": "9.5"}),
            "valid_number_min",
        ),
        (json!({"valid_number_min": "ten"}), "valid_number_min"),
        (json!({"valid_number_max": "0.0000001"}), "valid_number_max"),
        (
            json!({"valid_date_min": "2030-02-01", "valid_date_max": "2030-01-31"}),
            "valid_date_min",
        ),
        (json!({"valid_date_min": "01.02.2030"}), "valid_date_min"),
        (
            json!({"valid_datetime_min": "2030-02-01T10:00:00Z", "valid_datetime_max": "2030-02-01T09:00:00Z"}),
            "valid_datetime_min",
        ),
        (
            json!({"valid_string_length_max": -1}),
            "valid_string_length_max",
        ),
    ];
    for (extra, field) in cases {
        let mut body = json!({"question": {"en": "A"}, "type": "N"});
        for (k, v) in extra.as_object().expect("object") {
            body[k] = v.clone();
        }
        let r = s.app.post(QUESTIONS, &s.token, body).await;
        assert_eq!(r.status, 400, "{extra}");
        assert!(r.body[field][0].is_string(), "{extra}: {}", r.body);
    }
    let ok = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "W",
            "valid_number_min": "-1.25", "valid_number_max": "-1.25",
            "valid_datetime_min": "2030-02-01T10:00:00+01:00", "valid_datetime_max": "2030-02-01T09:00:00Z",
            "valid_string_length_max": 0}),
    )
    .await;
    assert_eq!(ok["valid_number_min"], "-1.250000");
    assert_eq!(ok["valid_string_length_max"], 0);
    let min: chrono::DateTime<chrono::Utc> = ok["valid_datetime_min"]
        .as_str()
        .expect("datetime")
        .parse()
        .expect("parse");
    assert_eq!(min.to_rfc3339(), "2030-02-01T09:00:00+00:00");

    let r = s
        .app
        .patch(
            &one(id_of(&ok)),
            &s.token,
            json!({"valid_number_max": "-2"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["valid_number_min"][0].is_string());
}

#[tokio::test]
async fn an_unknown_type_or_a_missing_question_text_is_400() {
    let s = setup().await;
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "A"}, "type": "X"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["type"][0].is_string());
    let r = s.app.post(QUESTIONS, &s.token, json!({"type": "S"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["question"][0].is_string());
    let r = s
        .app
        .post(QUESTIONS, &s.token, json!({"question": {"en": "A"}}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["type"][0].is_string());
    for kind in ["N", "S", "T", "B", "F", "D", "H", "W", "CC", "TEL", "EMAIL"] {
        let q = create(
            &s.app,
            &s.token,
            json!({"question": {"en": kind}, "type": kind}),
        )
        .await;
        assert_eq!(q["type"], kind);
    }
}

#[tokio::test]
async fn a_dependency_is_a_boolean_or_choice_question_of_this_event() {
    let s = setup().await;
    let text = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "T"}, "type": "S"}),
        )
        .await,
    );
    let boolean = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "B"}, "type": "B"}),
        )
        .await,
    );
    let choice = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "C"}, "type": "M", "options": [
            {"answer": {"en": "a"}, "identifier": "a"}, {"answer": {"en": "b"}, "identifier": "b"},
        ]}),
    )
    .await;
    let elsewhere = add_event(&s.app, s.org, "elsewhere", false).await;
    assert!(elsewhere > 0);
    let foreign = id_of(
        &create_in(
            &s.app,
            &s.token,
            "elsewhere",
            json!({"question": {"en": "F"}, "type": "B"}),
        )
        .await,
    );

    let depend = |dep: Value, values: Value| json!({"question": {"en": "D"}, "type": "S", "dependency_question": dep, "dependency_values": values});
    let r = s
        .app
        .post(QUESTIONS, &s.token, depend(json!(text), json!(["x"])))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_question"][0].is_string(), "{}", r.body);
    let r = s
        .app
        .post(QUESTIONS, &s.token, depend(json!(foreign), json!(["True"])))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_question"][0].is_string());
    let r = s
        .app
        .post(QUESTIONS, &s.token, depend(json!(boolean), json!(["yes"])))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_values"][0].is_string());
    let r = s
        .app
        .post(QUESTIONS, &s.token, depend(json!(boolean), json!([])))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_values"][0].is_string());
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            depend(json!(id_of(&choice)), json!(["a", "zzz"])),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["dependency_values"][0]
            .as_str()
            .expect("message")
            .contains("zzz")
    );

    let on_bool = create(&s.app, &s.token, depend(json!(boolean), json!(["True"]))).await;
    assert_eq!(on_bool["dependency_question"], boolean);
    assert_eq!(on_bool["dependency_values"], json!(["True"]));
    let on_choice = create(
        &s.app,
        &s.token,
        depend(json!(id_of(&choice)), json!(["a", "b"])),
    )
    .await;
    assert_eq!(on_choice["dependency_values"], json!(["a", "b"]));

    let r = s
        .app
        .patch(
            &one(id_of(&on_bool)),
            &s.token,
            json!({"dependency_question": null}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["dependency_question"], json!(null));
    assert_eq!(r.body["dependency_values"], json!([]));

    let r = s
        .app
        .patch(&one(boolean), &s.token, json!({"type": "S"}))
        .await;
    assert_eq!(r.status, 200, "nothing depends on it any more: {}", r.body);
    let r = s
        .app
        .patch(
            &one(id_of(&choice)),
            &s.token,
            json!({"type": "S", "options": []}),
        )
        .await;
    assert_eq!(r.status, 400, "a question depends on it");
    assert!(r.body["type"][0].is_string());
}

async fn create_in(app: &TestApp, token: &str, event: &str, body: Value) -> Value {
    let r = app
        .post(
            &format!("/api/v1/organizers/acme/events/{event}/questions/"),
            token,
            body,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

#[tokio::test]
async fn a_question_cannot_depend_on_itself_or_in_a_circle() {
    let s = setup().await;
    let a = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "A"}, "type": "B"}),
        )
        .await,
    );
    let b = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "B"}, "type": "B", "dependency_question": a, "dependency_values": ["True"]}),
        )
        .await,
    );
    let c = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "C"}, "type": "B", "dependency_question": b, "dependency_values": ["False"]}),
        )
        .await,
    );
    let r = s
        .app
        .patch(
            &one(a),
            &s.token,
            json!({"dependency_question": a, "dependency_values": ["True"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_question"][0].is_string());
    let r = s
        .app
        .patch(
            &one(a),
            &s.token,
            json!({"dependency_question": c, "dependency_values": ["True"]}),
        )
        .await;
    assert_eq!(r.status, 400, "a → c → b → a");
    assert!(r.body["dependency_question"][0].is_string());
}

#[tokio::test]
async fn dependencies_and_check_in_questions_do_not_mix() {
    let s = setup().await;
    let plain = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "A"}, "type": "B"}),
        )
        .await,
    );
    let at_checkin = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "B"}, "type": "B", "ask_during_checkin": true}),
        )
        .await,
    );
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "C"}, "type": "S", "ask_during_checkin": true,
                "dependency_question": plain, "dependency_values": ["True"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_question"][0].is_string());
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "D"}, "type": "S",
                "dependency_question": at_checkin, "dependency_values": ["True"]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["dependency_question"][0].is_string());
}

#[tokio::test]
async fn deleting_a_question_frees_the_questions_that_depended_on_it() {
    let s = setup().await;
    let item = add_item(&s.app, s.event, None, None).await;
    let base = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "items": [item], "options": sizes()}),
    )
    .await;
    let option = base["options"][0]["identifier"].clone();
    let dependent = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "B"}, "type": "S", "dependency_question": base["id"], "dependency_values": [option]}),
        )
        .await,
    );
    assert_eq!(s.app.delete(&one(id_of(&base)), &s.token).await.status, 204);
    let r = s.app.get(&one(dependent), &s.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["dependency_question"], json!(null));
    assert_eq!(r.body["dependency_values"], json!([]));
    assert_eq!(
        s.app.get(&options_of(id_of(&base)), &s.token).await.status,
        403
    );
}

#[tokio::test]
async fn deleting_an_item_takes_it_off_its_questions() {
    let s = setup().await;
    let gone = add_item(&s.app, s.event, None, None).await;
    let kept = add_item(&s.app, s.event, None, None).await;
    let q = id_of(
        &create(
            &s.app,
            &s.token,
            json!({"question": {"en": "A"}, "type": "S", "items": [gone, kept]}),
        )
        .await,
    );
    let r = s
        .app
        .delete(
            &format!("/api/v1/organizers/acme/events/conf/items/{gone}/"),
            &s.token,
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        s.app.get(&one(q), &s.token).await.body["items"],
        json!([kept])
    );
}

#[tokio::test]
async fn questions_are_listed_by_position_then_id_and_filtered() {
    let s = setup().await;
    for (identifier, position, kind, required, checkin) in [
        ("c", 2, "S", false, false),
        ("a", 1, "B", true, false),
        ("b", 1, "S", false, true),
    ] {
        create(
            &s.app,
            &s.token,
            json!({"question": {"en": identifier}, "identifier": identifier, "position": position,
                "type": kind, "required": required, "ask_during_checkin": checkin}),
        )
        .await;
    }
    let list = |query: &str| format!("{QUESTIONS}?{query}");
    let r = s.app.get(QUESTIONS, &s.token).await;
    assert_eq!(r.body["count"], 3);
    assert_eq!(identifiers(&r.body), ["a", "b", "c"]);
    let r = s.app.get(&list("ordering=id"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["c", "a", "b"]);
    let r = s.app.get(&list("ordering=position"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["a", "b", "c"]);
    let r = s.app.get(&list("type=S"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["b", "c"]);
    let r = s.app.get(&list("identifier=c"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["c"]);
    let r = s.app.get(&list("ask_during_checkin=true"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["b"]);
    let r = s.app.get(&list("required=false&type=S"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["b", "c"]);
    let r = s.app.get(&list("required=true"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["a"]);
    let r = s.app.get(&list("page_size=2"), &s.token).await;
    assert_eq!(identifiers(&r.body), ["a", "b"]);
    assert!(r.body["next"].as_str().expect("next").contains("page=2"));

    let r = s.app.get(&list("type=Q"), &s.token).await;
    assert_eq!(r.status, 400);
    assert!(r.body["type"][0].is_string());
    let r = s.app.get(&list("ordering=name"), &s.token).await;
    assert_eq!(r.status, 400);
    assert!(r.body["ordering"][0].is_string());
}

#[tokio::test]
async fn texts_are_plain_strings_in_the_language_asked_for() {
    let s = setup().await;
    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "Size", "de": "Größe"}, "help_text": {"en": "Pick", "de": "Wähle"},
            "type": "C", "options": [{"answer": {"en": "Small", "de": "Klein"}}]}),
    )
    .await;
    let r = s
        .app
        .get(&format!("{}?lang=de", one(id_of(&q))), &s.token)
        .await;
    assert_eq!(r.body["question"], "Größe");
    assert_eq!(r.body["help_text"], "Wähle");
    assert_eq!(r.body["options"][0]["answer"], "Klein");
    let r = s.app.get(&format!("{QUESTIONS}?lang=fr"), &s.token).await;
    assert_eq!(r.body["results"][0]["question"], "Size");
    let r = s
        .app
        .get(&format!("{}?lang=de", options_of(id_of(&q))), &s.token)
        .await;
    assert_eq!(r.body["results"][0]["answer"], "Klein");
}

#[tokio::test]
async fn reading_needs_any_access_and_writing_needs_can_change_items() {
    let s = setup().await;
    let reader = s.app.token("acme", &["can_view_orders"]).await;
    let settings = s.app.token("acme", &["can_change_event_settings"]).await;
    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "options": sizes()}),
    )
    .await;
    let id = id_of(&q);
    let option = format!("{}{}/", options_of(id), q["options"][0]["id"]);

    for path in [
        QUESTIONS.to_owned(),
        one(id),
        options_of(id),
        option.clone(),
    ] {
        assert_eq!(s.app.get(&path, &reader).await.status, 200, "{path}");
    }
    let body = json!({"question": {"en": "B"}, "type": "S"});
    for token in [&reader, &settings] {
        assert_eq!(s.app.post(QUESTIONS, token, body.clone()).await.status, 403);
        assert_eq!(
            s.app
                .patch(&one(id), token, json!({"position": 1}))
                .await
                .status,
            403
        );
        assert_eq!(s.app.put(&one(id), token, body.clone()).await.status, 403);
        assert_eq!(s.app.delete(&one(id), token).await.status, 403);
        let answer = json!({"answer": {"en": "x"}});
        assert_eq!(
            s.app
                .post(&options_of(id), token, answer.clone())
                .await
                .status,
            403
        );
        assert_eq!(
            s.app.patch(&option, token, answer.clone()).await.status,
            403
        );
        assert_eq!(s.app.put(&option, token, answer).await.status, 403);
        assert_eq!(s.app.delete(&option, token).await.status, 403);
    }
    let r = s.app.get(&one(id), &s.token).await;
    assert_eq!(r.body, q, "nothing changed");
}

#[tokio::test]
async fn another_organizers_or_another_events_token_is_403_and_no_token_is_401() {
    let s = setup().await;
    add_event(&s.app, s.org, "other-conf", false).await;
    s.app.organizer("rival").await;
    let rival = s.app.admin_token("rival").await;
    let limited = s
        .app
        .token_for("acme", Some(PermissionSet::all()), &["other-conf"])
        .await;
    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "A"}, "type": "C", "options": sizes()}),
    )
    .await;
    let id = id_of(&q);
    let option = format!("{}{}/", options_of(id), q["options"][0]["id"]);
    for token in [&rival, &limited] {
        for path in [
            QUESTIONS.to_owned(),
            one(id),
            options_of(id),
            option.clone(),
        ] {
            assert_eq!(s.app.get(&path, token).await.status, 403, "{path}");
        }
        assert_eq!(
            s.app
                .post(
                    QUESTIONS,
                    token,
                    json!({"question": {"en": "B"}, "type": "S"})
                )
                .await
                .status,
            403
        );
        assert_eq!(s.app.delete(&one(id), token).await.status, 403);
        assert_eq!(s.app.delete(&option, token).await.status, 403);
    }
    let r = s.app.call(Method::GET, QUESTIONS, None, None).await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn a_question_of_another_event_is_not_reachable_through_this_one() {
    let s = setup().await;
    add_event(&s.app, s.org, "other-conf", false).await;
    let there = create_in(
        &s.app,
        &s.token,
        "other-conf",
        json!({"question": {"en": "Elsewhere"}, "type": "C", "options": sizes()}),
    )
    .await;
    let id = id_of(&there);
    assert_eq!(s.app.get(&one(id), &s.token).await.status, 403);
    assert_eq!(
        s.app
            .patch(&one(id), &s.token, json!({"position": 1}))
            .await
            .status,
        403
    );
    assert_eq!(s.app.delete(&one(id), &s.token).await.status, 403);
    assert_eq!(s.app.get(&options_of(id), &s.token).await.status, 403);
    assert_eq!(s.app.get(QUESTIONS, &s.token).await.body["count"], 0);
}

#[tokio::test]
async fn cloning_copies_questions_options_items_and_dependencies_to_another_event() {
    let s = setup().await;
    let ticket = add_item(&s.app, s.event, None, None).await;
    let shirt = add_item(&s.app, s.event, None, None).await;
    let later = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "Later"}, "type": "S", "identifier": "later", "position": 3}),
    )
    .await;
    let size = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "Size"}, "type": "C", "identifier": "size", "items": [ticket, shirt],
            "options": [{"answer": {"en": "S"}, "identifier": "s"}, {"answer": {"en": "M"}, "identifier": "m"}],
            "valid_number_min": "1"}),
    )
    .await;
    let r = s
        .app
        .patch(
            &one(id_of(&later)),
            &s.token,
            json!({"dependency_question": size["id"], "dependency_values": ["m"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let copy_event = add_event(&s.app, s.org, "copy", false).await;
    let ticket_copy = add_item(&s.app, copy_event, None, None).await;
    let item_ids = HashMap::from([(ticket, ticket_copy)]);
    tessera::domain::questions::clone_questions(&s.app.db, s.event, copy_event, &item_ids)
        .await
        .expect("clone");

    let r = s
        .app
        .get(
            "/api/v1/organizers/acme/events/copy/questions/?ordering=id",
            &s.token,
        )
        .await;
    assert_eq!(r.body["count"], 2);
    let copies = r.body["results"].as_array().expect("results");
    let (later_copy, size_copy) = (&copies[0], &copies[1]);
    assert_eq!(later_copy["identifier"], "later");
    assert_eq!(later_copy["position"], 3);
    assert_eq!(later_copy["dependency_question"], size_copy["id"]);
    assert_eq!(later_copy["dependency_values"], json!(["m"]));
    assert_ne!(size_copy["id"], size["id"]);
    assert_eq!(
        size_copy["items"],
        json!([ticket_copy]),
        "items without a copy are left out"
    );
    assert_eq!(size_copy["valid_number_min"], "1.000000");
    let options = size_copy["options"].as_array().expect("options");
    assert_eq!(options.len(), 2);
    assert_eq!(options[0]["identifier"], "s");
    assert_eq!(options[1]["answer"], json!({"en": "M"}));
    assert_ne!(options[0]["id"], size["options"][0]["id"]);

    let r = s.app.get(&one(id_of(&size)), &s.token).await;
    assert_eq!(
        r.body["items"],
        json!([ticket, shirt]),
        "the source is unchanged"
    );
}

#[tokio::test]
async fn a_question_with_more_than_a_thousand_items_or_options_is_400() {
    let s = setup().await;
    let items: Vec<i64> = (1..=70_000).collect();
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "Q"}, "type": "S", "items": items}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["items"][0],
        "Ensure this field has no more than 1000 elements."
    );
    let options: Vec<Value> = (0..1_001)
        .map(|i| json!({"answer": {"en": format!("O{i}")}}))
        .collect();
    let r = s
        .app
        .post(
            QUESTIONS,
            &s.token,
            json!({"question": {"en": "Q"}, "type": "C", "options": options}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["options"][0].is_string());
}

#[tokio::test]
async fn deleting_the_last_two_options_at_once_leaves_one() {
    use tessera::db::entities::question;
    let s = setup().await;
    let q = create(
        &s.app,
        &s.token,
        json!({"question": {"en": "Size"}, "type": "C", "options": sizes()}),
    )
    .await;
    let list = options_of(id_of(&q));
    let doomed = &q["options"].as_array().expect("options")[..2];
    let r = s
        .app
        .delete(&format!("{list}{}/", doomed[0]["id"]), &s.token)
        .await;
    assert_eq!(r.status, 204);
    let left: Vec<String> = s.app.get(&list, &s.token).await.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|o| format!("{list}{}/", o["id"]))
        .collect();
    assert_eq!(left.len(), 2);
    let held = crate::catalogue_support::hold::<question::Entity>(&s.app, id_of(&q)).await;
    let (a, b, ()) = tokio::join!(
        s.app.delete(&left[0], &s.token),
        s.app.delete(&left[1], &s.token),
        crate::catalogue_support::release_soon(held),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [204, 403], "{} / {}", a.body, b.body);
    assert_eq!(s.app.get(&list, &s.token).await.body["count"], 1);
}
