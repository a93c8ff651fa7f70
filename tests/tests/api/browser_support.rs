//! A browser over the test client: keeps one person's cookies, posts forms, signs in; and
//! helpers to read pages.

use poem::http::Method;
use tessera_tests::{Reply, TestApp};

/// The body of an HTML reply.
pub fn html(reply: &Reply) -> &str {
    reply.body.as_str().unwrap_or_default()
}

/// The `Set-Cookie` headers of a reply.
pub fn set_cookies(reply: &Reply) -> Vec<String> {
    reply
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_owned)
        .collect()
}

/// The hidden CSRF field of a page's form.
pub fn csrf_field(page: &str) -> String {
    let marker = "name=\"csrfmiddlewaretoken\" value=\"";
    let start = page.find(marker).expect("csrf field") + marker.len();
    page[start..].split('"').next().expect("value").to_owned()
}

/// A browser that keeps the cookies of one person (a clone is another tab with the same
/// cookies).
#[derive(Clone)]
pub struct Browser<'a> {
    app: &'a TestApp,
    cookies: Vec<String>,
}

impl<'a> Browser<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            cookies: Vec::new(),
        }
    }

    pub fn keep(&mut self, reply: &Reply) {
        for c in set_cookies(reply) {
            let Some(pair) = c.split(';').next() else {
                continue;
            };
            let name = pair.split('=').next().unwrap_or_default().to_owned();
            self.cookies.retain(|k| !k.starts_with(&format!("{name}=")));
            if !pair.ends_with('=') {
                self.cookies.push(pair.to_owned());
            }
        }
    }

    pub async fn get(&mut self, path: &str) -> Reply {
        let cookie = self.cookies.join("; ");
        let reply = self
            .app
            .raw(Method::GET, path, &[("Cookie", &cookie)], Vec::new())
            .await;
        self.keep(&reply);
        reply
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Reply {
        let cookie = self.cookies.join("; ");
        let body = form_body(form);
        let reply = self
            .app
            .raw(
                Method::POST,
                path,
                &[
                    ("Cookie", &cookie),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ],
                body.into_bytes(),
            )
            .await;
        self.keep(&reply);
        reply
    }

    /// Opens the sign-in page (with `next` in its query) and posts the form.
    pub async fn sign_in(&mut self, email: &str, password: &str, next: &str) -> Reply {
        let page = self.get(&format!("/login?next={}", encode(next))).await;
        assert_eq!(page.status, 200);
        let token = csrf_field(html(&page));
        self.post(
            "/login",
            &[
                ("csrfmiddlewaretoken", &token),
                ("email", email),
                ("password", password),
                ("next", next),
            ],
        )
        .await
    }
}

pub fn form_body(form: &[(&str, &str)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

pub fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
