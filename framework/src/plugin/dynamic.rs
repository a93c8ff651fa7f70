//! Dynamic plugins: a shared library loaded at start ([`library::PluginLibrary`]) behind the
//! [`Plugin`] trait. Its manifest declares settings, payment providers and endpoints; every
//! call into it exchanges JSON bytes and runs on a blocking thread, so a plugin never runs
//! on the server's async workers.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Query;
use poem::{Endpoint, FromRequest, Request, Response};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tessera_plugin_sdk as sdk;

use super::api::PluginApi;
use super::library::{self, PluginLibrary};
use super::{Plugin, PluginLevel};
use crate::domain::extensions::payments::{
    CreatedPayment, PaymentContext, PaymentProvider, PaymentRecord,
};
use crate::domain::permissions::Permission;
use crate::domain::settings::{self, Level, Scope, SettingDef, SettingType};
use crate::http::auth::{EventAccess, OrganizerAccess, TOKEN_SCHEME};
use crate::http::{ApiError, Money};
use crate::state::AppState;

/// Loads the plugins of every library in `dir` that passes the checks; refused libraries
/// are logged and skipped.
pub fn load_dir(dir: &Path) -> Vec<Arc<dyn Plugin>> {
    library::load_dir(dir)
        .into_iter()
        .map(|lib| Arc::new(DynamicPlugin::new(lib)) as Arc<dyn Plugin>)
        .collect()
}

/// Calls the library on a blocking thread and reads the answer as `T`.
async fn call<T: DeserializeOwned>(
    lib: &Arc<PluginLibrary>,
    method: &'static str,
    input: Value,
) -> Result<T, String> {
    let lib = lib.clone();
    let answer = tokio::task::spawn_blocking(move || lib.call(method, &input))
        .await
        .map_err(|_| "The plugin could not be called.".to_owned())??;
    serde_json::from_value(answer).map_err(|e| format!("The plugin answered unexpectedly: {e}"))
}

/// A plugin loaded from a shared library.
pub struct DynamicPlugin {
    lib: Arc<PluginLibrary>,
    settings: Vec<SettingDef>,
    providers: Vec<Arc<dyn PaymentProvider>>,
}

/// Strings of a manifest live as long as the library, which is never unloaded.
fn forever(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

impl DynamicPlugin {
    /// Wraps a loaded library.
    pub fn new(lib: PluginLibrary) -> Self {
        let lib = Arc::new(lib);
        let m = lib.manifest();
        let settings = m.settings.iter().map(|s| setting(&lib, s)).collect();
        let providers = m
            .payment_providers
            .iter()
            .map(|p| {
                Arc::new(DynamicProvider {
                    lib: lib.clone(),
                    identifier: p.identifier.clone(),
                    name: p.name.clone(),
                }) as Arc<dyn PaymentProvider>
            })
            .collect();
        Self {
            lib,
            settings,
            providers,
        }
    }
}

fn setting(lib: &Arc<PluginLibrary>, s: &sdk::SettingSpec) -> SettingDef {
    let ty = match s.kind {
        sdk::SettingKind::Bool => SettingType::Bool,
        sdk::SettingKind::Int => {
            let (min, max) = s.bounds();
            SettingType::Int { min, max }
        }
        sdk::SettingKind::Text => SettingType::Text {
            max_length: s.text_length(),
        },
        sdk::SettingKind::Email => SettingType::Email,
        sdk::SettingKind::Url => SettingType::Url,
    };
    let level = match s.level {
        sdk::SettingLevel::Both => Level::Both,
        sdk::SettingLevel::Organizer => Level::Organizer,
        sdk::SettingLevel::Event => Level::Event,
    };
    let def = SettingDef::new(
        forever(&s.key),
        ty,
        s.default.clone(),
        forever(&s.label),
        forever(&s.help_text),
    )
    .level(level);
    if !s.validate {
        return def;
    }
    let (lib, key) = (lib.clone(), s.key.clone());
    def.validate(move |value| {
        let check = json!({"key": key, "value": value});
        lib.call("validate_setting", &check).map(|_| ())
    })
}

#[async_trait::async_trait]
impl Plugin for DynamicPlugin {
    fn name(&self) -> &str {
        &self.lib.manifest().name
    }

    fn version(&self) -> &str {
        &self.lib.manifest().version
    }

    fn description(&self) -> &str {
        &self.lib.manifest().description
    }

    fn level(&self) -> PluginLevel {
        match self.lib.manifest().level {
            sdk::Level::Event => PluginLevel::Event,
            sdk::Level::Organizer => PluginLevel::Organizer,
            sdk::Level::Both => PluginLevel::Both,
        }
    }

    fn settings(&self) -> Vec<SettingDef> {
        self.settings.clone()
    }

    fn payment_providers(&self) -> Vec<Arc<dyn PaymentProvider>> {
        self.providers.clone()
    }

    fn api(&self) -> Option<PluginApi> {
        let m = self.lib.manifest();
        if m.endpoints.is_empty() {
            return None;
        }
        let mut paths = Map::new();
        for e in &m.endpoints {
            let item = paths
                .entry(full_path(&m.name, e, true))
                .or_insert_with(|| json!({}));
            item[e.method.to_lowercase()] = operation(&m.name, e);
        }
        let spec =
            json!({"paths": paths, "tags": [{"name": m.name, "description": m.description}]});
        Some(PluginApi::from_parts(
            DynamicEndpoint {
                lib: self.lib.clone(),
            },
            spec,
        ))
    }
}

/// The path of an endpoint, in the OpenAPI document's form (`{organizer}`) or relative.
fn full_path(plugin: &str, e: &sdk::EndpointSpec, templated: bool) -> String {
    let (org, ev) = if templated {
        ("{organizer}", "{event}")
    } else {
        ("", "")
    };
    let rest = e.path.trim_matches('/');
    match e.scope {
        sdk::Scope::Event => {
            format!("/api/v1/organizers/{org}/events/{ev}/plugins/{plugin}/{rest}")
        }
        sdk::Scope::Organizer => format!("/api/v1/organizers/{org}/plugins/{plugin}/{rest}"),
    }
}

/// The manifest's operation with what the core adds: path parameters, the token scheme,
/// and the core's error answers.
fn operation(plugin: &str, e: &sdk::EndpointSpec) -> Value {
    let mut op = e.operation.as_object().cloned().unwrap_or_default();
    op.entry("summary")
        .or_insert_with(|| json!(format!("{} {}", e.method, e.path)));
    op.entry("tags").or_insert_with(|| json!([plugin]));
    let mut params = vec![
        json!({"name": "organizer", "in": "path", "required": true, "schema": {"type": "string"}}),
    ];
    if e.scope == sdk::Scope::Event {
        params.push(
            json!({"name": "event", "in": "path", "required": true, "schema": {"type": "string"}}),
        );
    }
    op.insert("parameters".into(), Value::Array(params));
    op.insert("security".into(), json!([{ TOKEN_SCHEME: [] }]));
    let responses = op.entry("responses").or_insert_with(|| json!({}));
    for (status, description) in [
        ("400", "Invalid input."),
        (
            "401",
            "Authentication credentials were not provided or are invalid.",
        ),
        ("403", "The caller may not do this."),
        ("404", "The plugin is not enabled here."),
    ] {
        if let Some(r) = responses.as_object_mut() {
            r.entry(status)
                .or_insert_with(|| json!({"description": description}));
        }
    }
    Value::Object(op)
}

/// The endpoints of a dynamic plugin: the core has admitted the caller; this finds the
/// declared endpoint, checks its permission, and hands the request to the library.
struct DynamicEndpoint {
    lib: Arc<PluginLibrary>,
}

impl Endpoint for DynamicEndpoint {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let m = self.lib.manifest();
        let path = req.uri().path().trim_end_matches('/');
        let declared = m.endpoints.iter().find(|e| {
            e.method.eq_ignore_ascii_case(req.method().as_str())
                && matches_path(&full_path(&m.name, e, false), path)
        });
        let Some(e) = declared else {
            return Err(poem::error::NotFoundError.into());
        };
        let bytes = req.take_body().into_bytes().await?;
        let body = match bytes.is_empty() {
            true => Value::Null,
            false => serde_json::from_slice(&bytes)
                .map_err(|e| ApiError::bad_request(format!("JSON parse error - {e}")))?,
        };
        let input = self.request(&req, e, body).await?;
        let answer: sdk::HttpResponse = call(&self.lib, "http", input)
            .await
            .map_err(|message| ApiError::detail(StatusCode::BAD_GATEWAY, message))?;
        let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
        let body = match answer.body {
            Value::Object(_) => answer.body,
            other if status.is_client_error() || status.is_server_error() => {
                json!({ "detail": other })
            }
            other => other,
        };
        Ok(Response::builder()
            .status(status)
            .content_type("application/json")
            .body(body.to_string()))
    }
}

/// Whether a request path fits a declared path whose organizer and event are left empty.
fn matches_path(declared: &str, path: &str) -> bool {
    let want: Vec<&str> = declared.split('/').collect();
    let got: Vec<&str> = path.split('/').collect();
    want.len() == got.len()
        && want
            .iter()
            .zip(&got)
            .all(|(w, g)| w.is_empty() && !g.is_empty() || w == g)
}

impl DynamicEndpoint {
    /// The library's view of a request, once the caller's permission is checked.
    async fn request(
        &self,
        req: &Request,
        e: &sdk::EndpointSpec,
        body: Value,
    ) -> Result<Value, ApiError> {
        let state = req.data::<AppState>().ok_or_else(ApiError::internal)?;
        let needs = match &e.permission {
            Some(name) => Some(Permission::from_name(name).ok_or_else(ApiError::internal)?),
            None => None,
        };
        let (organizer, event, permissions, values) = match req.data::<EventAccess>() {
            Some(access) => {
                if let Some(p) = needs {
                    access.require(p)?;
                }
                let cache = state.cache.current().await;
                let values =
                    settings::of_event(&state.db, &state.settings, cache, &access.event).await?;
                let values: BTreeMap<&str, Value> = (*values).clone();
                (
                    &access.organizer,
                    Some(access.event.slug.clone()),
                    access.permissions,
                    values,
                )
            }
            None => {
                let access = req
                    .data::<OrganizerAccess>()
                    .ok_or_else(ApiError::internal)?;
                if needs.is_some_and(|p| !access.permissions.has(p)) {
                    return Err(ApiError::forbidden());
                }
                let scope = Scope::Organizer(access.organizer.id);
                let values = settings::resolve(&state.db, &state.settings, scope).await?;
                (&access.organizer, None, access.permissions, values)
            }
        };
        let query = Query::<BTreeMap<String, String>>::from_request_without_body(req)
            .await
            .map(|q| q.0)
            .unwrap_or_default();
        Ok(json!({
            "method": req.method().as_str(),
            "path": e.path,
            "query": query,
            "body": body,
            "organizer": organizer.slug,
            "event": event,
            "settings": values,
            "permissions": Permission::ALL
                .into_iter()
                .filter(|p| permissions.has(*p))
                .map(Permission::name)
                .collect::<Vec<_>>(),
        }))
    }
}

/// A payment provider of a dynamic plugin.
struct DynamicProvider {
    lib: Arc<PluginLibrary>,
    identifier: String,
    name: String,
}

impl DynamicProvider {
    fn request(&self, ctx: &PaymentContext) -> Value {
        json!({
            "provider": self.identifier,
            "organizer": ctx.organizer,
            "event": ctx.event,
            "order_code": ctx.order_code,
            "amount": Money(ctx.amount_cents).to_string(),
            "currency": ctx.currency,
            "sales_channel": ctx.sales_channel,
            "email": ctx.email,
            "expires": ctx.expires.map(|e| e.to_rfc3339()),
            "settings": ctx.settings,
            "default_payment_url": ctx.default_payment_url,
        })
    }

    fn action(&self, ctx: &PaymentContext, p: &PaymentRecord, amount_cents: i64) -> Value {
        json!({
            "provider": self.identifier,
            "request": self.request(ctx),
            "local_id": p.local_id,
            "details": p.details,
            "amount": Money(amount_cents).to_string(),
        })
    }
}

#[async_trait::async_trait]
impl PaymentProvider for DynamicProvider {
    fn identifier(&self) -> &str {
        &self.identifier
    }

    fn name(&self) -> &str {
        &self.name
    }

    async fn create_payment(&self, ctx: &PaymentContext) -> Result<CreatedPayment, String> {
        let created: sdk::PaymentCreated =
            call(&self.lib, "payment.create", self.request(ctx)).await?;
        Ok(CreatedPayment {
            payment_url: created.payment_url,
            details: created.details,
            instructions: created.instructions,
        })
    }

    async fn confirm_payment(&self, ctx: &PaymentContext, p: &PaymentRecord) -> Result<(), String> {
        let _: Value = call(
            &self.lib,
            "payment.confirm",
            self.action(ctx, p, p.amount_cents),
        )
        .await?;
        Ok(())
    }

    async fn cancel_payment(&self, ctx: &PaymentContext, p: &PaymentRecord) -> Result<(), String> {
        let _: Value = call(
            &self.lib,
            "payment.cancel",
            self.action(ctx, p, p.amount_cents),
        )
        .await?;
        Ok(())
    }

    /// A plugin library answers for itself: asked, it may refuse.
    fn can_refund(&self) -> bool {
        true
    }

    async fn refund(
        &self,
        ctx: &PaymentContext,
        p: &PaymentRecord,
        amount_cents: i64,
        reference: &str,
    ) -> Result<Value, String> {
        let mut action = self.action(ctx, p, amount_cents);
        action["reference"] = reference.into();
        call(&self.lib, "payment.refund", action).await
    }
}
