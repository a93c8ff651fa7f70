use std::collections::HashMap;

use serde_json::{Value, json};
use tessera_tests::TestApp;

use crate::catalogue_support::{EVENT, catalogue_app, created, id, item};

/// Every object of a list endpoint.
async fn all(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    let r = app.get(path, token).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.body["results"].as_array().expect("results").clone()
}

/// Names of an event's objects by ID, so that two events' catalogues can be compared with
/// every reference replaced by the name of what it points to.
#[derive(Default)]
struct Names(HashMap<(&'static str, i64), String>);

impl Names {
    async fn of(app: &TestApp, token: &str, event: &str) -> Self {
        let base = format!("/api/v1/organizers/acme/events/{event}");
        let mut names = Self::default();
        for c in all(app, token, &format!("{base}/categories/")).await {
            names
                .0
                .insert(("category", id(&c)), c["name"]["en"].to_string());
        }
        for t in all(app, token, &format!("{base}/taxrules/")).await {
            names
                .0
                .insert(("tax_rule", id(&t)), t["name"]["en"].to_string());
        }
        for q in all(app, token, &format!("{base}/quotas/")).await {
            names.0.insert(("quota", id(&q)), q["name"].to_string());
        }
        for q in all(app, token, &format!("{base}/questions/")).await {
            names
                .0
                .insert(("question", id(&q)), q["identifier"].to_string());
        }
        for i in all(app, token, &format!("{base}/items/")).await {
            names
                .0
                .insert(("item", id(&i)), i["name"]["en"].to_string());
            for v in i["variations"].as_array().expect("variations") {
                names
                    .0
                    .insert(("variation", id(v)), v["value"]["en"].to_string());
            }
        }
        names
    }

    fn name(&self, kind: &'static str, v: &Value) -> Value {
        match v.as_i64() {
            Some(i) => json!(
                self.0
                    .get(&(kind, i))
                    .cloned()
                    .unwrap_or_else(|| format!("unknown {kind} {i}"))
            ),
            None => v.clone(),
        }
    }

    /// The object with IDs removed and references named.
    fn neutral(&self, obj: &Value, refs: &[(&str, &'static str)]) -> Value {
        let mut out = obj.clone();
        let map = out.as_object_mut().expect("object");
        map.remove("id");
        for (field, kind) in refs {
            let named = match &map[*field] {
                Value::Array(list) => {
                    // Lists of references are sets.
                    let mut named: Vec<Value> = list.iter().map(|v| self.name(kind, v)).collect();
                    named.sort_by_key(Value::to_string);
                    Value::Array(named)
                }
                v => self.name(kind, v),
            };
            map.insert((*field).to_owned(), named);
        }
        out
    }

    fn item(&self, it: &Value) -> Value {
        let mut out = self.neutral(
            it,
            &[
                ("category", "category"),
                ("tax_rule", "tax_rule"),
                ("hidden_if_available", "quota"),
            ],
        );
        let list = |key: &str, refs: &[(&str, &'static str)]| -> Value {
            Value::Array(
                it[key]
                    .as_array()
                    .expect("list")
                    .iter()
                    .map(|o| self.neutral(o, refs))
                    .collect(),
            )
        };
        out["variations"] = list("variations", &[]);
        out["addons"] = list("addons", &[("addon_category", "category")]);
        out["bundles"] = list(
            "bundles",
            &[("bundled_item", "item"), ("bundled_variation", "variation")],
        );
        out
    }
}

#[tokio::test]
async fn a_clone_copies_items_variations_add_ons_bundles_quotas_questions_and_discounts_field_by_field()
 {
    let (app, _, token) = catalogue_app().await;
    let cat = created(
        &app,
        &format!("{EVENT}/categories/"),
        &token,
        json!({"name": {"en": "Tickets"}}),
    )
    .await;
    let extras = created(
        &app,
        &format!("{EVENT}/categories/"),
        &token,
        json!({"name": {"en": "Extras"}, "is_addon": true}),
    )
    .await;
    let tax = created(
        &app,
        &format!("{EVENT}/taxrules/"),
        &token,
        json!({"name": {"en": "VAT"}, "rate": "19.00"}),
    )
    .await;
    let shirt = item(
        &app,
        &token,
        json!({"name": {"en": "Shirt"}, "default_price": "15.00", "category": id(&extras),
               "variations": [{"value": {"en": "S"}}, {"value": {"en": "XL"}, "default_price": "17.00"}]}),
    )
    .await;
    let ticket = item(
        &app,
        &token,
        json!({"name": {"en": "Ticket"}, "internal_name": "main", "default_price": "99.00",
               "category": id(&cat), "tax_rule": id(&tax), "admission": true, "position": 1,
               "description": {"en": "Entry"}, "free_price": true, "sales_channels": ["web", "resellers"],
               "available_from": "2030-01-01T00:00:00Z", "min_per_order": 1, "max_per_order": 5,
               "original_price": "120.00", "generate_tickets": true, "show_quota_left": false,
               "require_approval": true, "checkin_attention": true, "allow_waitinglist": false,
               "variations": [{"value": {"en": "Regular"}, "position": 1}, {"value": {"en": "Student"}, "default_price": "49.00", "active": false}],
               "addons": [{"addon_category": id(&extras), "min_count": 0, "max_count": 2, "price_included": true}],
               "bundles": [{"bundled_item": id(&shirt), "bundled_variation": id(&shirt["variations"][1]), "count": 2, "designated_price": "10.00"}]}),
    )
    .await;
    let quota = created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Hall", "size": 300, "items": [id(&ticket), id(&shirt)],
               "variations": [id(&ticket["variations"][0]), id(&ticket["variations"][1]), id(&shirt["variations"][0])],
               "close_when_sold_out": true, "release_after_exit": true}),
    )
    .await;
    created(
        &app,
        &format!("{EVENT}/quotas/"),
        &token,
        json!({"name": "Unlimited", "size": null}),
    )
    .await;
    let r = app
        .patch(
            &format!("{EVENT}/items/{}/", id(&shirt)),
            &token,
            json!({"hidden_if_available": id(&quota)}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let diet = created(
        &app,
        &format!("{EVENT}/questions/"),
        &token,
        json!({"question": {"en": "Diet?"}, "type": "C", "identifier": "DIET", "required": true,
               "items": [id(&ticket)], "position": 1,
               "options": [{"identifier": "VEG", "answer": {"en": "Vegetarian"}},
                           {"identifier": "ALL", "answer": {"en": "Anything"}, "position": 1}]}),
    )
    .await;
    created(
        &app,
        &format!("{EVENT}/questions/"),
        &token,
        json!({"question": {"en": "Which dishes?"}, "type": "S", "identifier": "DISHES",
               "items": [id(&ticket), id(&shirt)], "position": 2, "help_text": {"en": "Free text"},
               "dependency_question": id(&diet), "dependency_values": ["VEG"],
               "valid_string_length_max": 200}),
    )
    .await;
    created(
        &app,
        &format!("{EVENT}/discounts/"),
        &token,
        json!({"internal_name": "Shirt with a ticket", "condition_all_products": false,
               "condition_limit_products": [id(&ticket)], "condition_min_count": 1,
               "benefit_same_products": false, "benefit_limit_products": [id(&shirt)],
               "benefit_discount_matching_percent": "50.00"}),
    )
    .await;
    let r = app
        .post(
            &format!("{EVENT}/clone/"),
            &token,
            json!({"name": {"en": "Copy"}, "slug": "copy", "currency": "EUR", "date_from": "2031-06-01T09:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);

    let (src, dst) = (
        Names::of(&app, &token, "conf").await,
        Names::of(&app, &token, "copy").await,
    );
    let copy = "/api/v1/organizers/acme/events/copy";
    let src_items = all(&app, &token, &format!("{EVENT}/items/")).await;
    let dst_items = all(&app, &token, &format!("{copy}/items/")).await;
    assert_eq!(src_items.len(), 2);
    assert_eq!(dst_items.len(), 2);
    for (s, d) in src_items.iter().zip(&dst_items) {
        assert_ne!(s["id"], d["id"]);
        assert_eq!(src.item(s), dst.item(d));
    }
    let refs = [("items", "item"), ("variations", "variation")];
    let src_quotas = all(&app, &token, &format!("{EVENT}/quotas/")).await;
    let dst_quotas = all(&app, &token, &format!("{copy}/quotas/")).await;
    assert_eq!(src_quotas.len(), dst_quotas.len());
    for (s, d) in src_quotas.iter().zip(&dst_quotas) {
        assert_eq!(src.neutral(s, &refs), dst.neutral(d, &refs));
    }
    let src_questions = all(&app, &token, &format!("{EVENT}/questions/")).await;
    let dst_questions = all(&app, &token, &format!("{copy}/questions/")).await;
    assert_eq!(src_questions.len(), 2);
    assert_eq!(dst_questions.len(), 2);
    let refs = [("items", "item"), ("dependency_question", "question")];
    for (s, d) in src_questions.iter().zip(&dst_questions) {
        let neutral = |names: &Names, q: &Value| {
            let mut out = names.neutral(q, &refs);
            for o in out["options"].as_array_mut().expect("options") {
                o.as_object_mut().expect("option").remove("id");
            }
            out
        };
        assert_eq!(neutral(&src, s), neutral(&dst, d));
    }
    let refs = [
        ("condition_limit_products", "item"),
        ("benefit_limit_products", "item"),
    ];
    let src_discounts = all(&app, &token, &format!("{EVENT}/discounts/")).await;
    let dst_discounts = all(&app, &token, &format!("{copy}/discounts/")).await;
    assert_eq!(dst_discounts.len(), 1);
    assert_eq!(
        src.neutral(&src_discounts[0], &refs),
        dst.neutral(&dst_discounts[0], &refs)
    );
    // The copies point at the copy's objects only.
    let shirt_copy = &dst_items[0];
    assert_eq!(shirt_copy["hidden_if_available"], dst_quotas[0]["id"]);
}
