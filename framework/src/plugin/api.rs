//! Plugins' HTTP endpoints. Each plugin answers under its own prefixes,
//! `/api/v1/organizers/{organizer}/events/{event}/plugins/{name}/` and
//! `/api/v1/organizers/{organizer}/plugins/{name}/`. Before a plugin sees a request, the
//! core authenticates the caller (401), checks that the caller may see the organizer and
//! event (403) and that the plugin is active there (404), and hands the checked access on
//! as request data ([`EventAccess`] or [`OrganizerAccess`]). Errors, rate limits, request
//! logs and idempotency keys are the core's as for any other path.

use std::collections::HashMap;

use poem::endpoint::BoxEndpoint;
use poem::{Endpoint, EndpointExt, IntoEndpoint, IntoResponse, Request, Response};
use poem_openapi::{OpenApi, OpenApiService};
use serde_json::{Map, Value};

use super::PluginRegistry;
use crate::http::ApiError;
use crate::http::auth::{EventAccess, OrganizerAccess, authenticate};
use crate::state::AppState;

/// A plugin's endpoints and their OpenAPI description.
pub struct PluginApi {
    endpoint: BoxEndpoint<'static>,
    spec: Value,
}

impl PluginApi {
    /// Endpoints written with poem-openapi like the core's: declare full paths under the
    /// plugin's prefixes, take `auth: Auth` for the security scheme, and read the checked
    /// access with `Data<&EventAccess>` (or `Data<&OrganizerAccess>`).
    pub fn new(api: impl OpenApi + 'static) -> Self {
        let service = OpenApiService::new(api, "plugin", "1");
        let spec = serde_json::from_str(&service.spec()).unwrap_or(Value::Null);
        Self::from_parts(service.into_endpoint(), spec)
    }

    /// Any endpoint, with the OpenAPI document (or fragment: `paths`, `components`, `tags`)
    /// that describes it.
    pub fn from_parts(endpoint: impl Endpoint + 'static, spec: Value) -> Self {
        Self {
            endpoint: endpoint.map_to_response().boxed(),
            spec,
        }
    }

    /// The OpenAPI description.
    pub fn spec(&self) -> &Value {
        &self.spec
    }
}

/// The prefix of a plugin's endpoints: the organizer, the event (for event-scoped ones)
/// and the plugin's name, read from a request path.
#[derive(Debug, PartialEq, Eq)]
struct Target<'a> {
    organizer: &'a str,
    event: Option<&'a str>,
    plugin: &'a str,
}

fn target(path: &str) -> Option<Target<'_>> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [
            "api",
            "v1",
            "organizers",
            organizer,
            "events",
            event,
            "plugins",
            plugin,
            ..,
        ] => Some(Target {
            organizer,
            event: Some(event),
            plugin,
        }),
        ["api", "v1", "organizers", organizer, "plugins", plugin, ..] => Some(Target {
            organizer,
            event: None,
            plugin,
        }),
        _ => None,
    }
}

/// The core's endpoint with the plugins' endpoints beside it.
pub struct WithPlugins<E> {
    core: E,
    plugins: HashMap<String, BoxEndpoint<'static>>,
}

impl<E> WithPlugins<E> {
    /// Routes each plugin's prefixes to its endpoints, everything else to `core`.
    pub fn new(core: E, registry: &PluginRegistry) -> Self {
        let plugins = registry
            .all()
            .iter()
            .filter_map(|p| Some((p.name().to_owned(), p.api()?.endpoint)))
            .collect();
        Self { core, plugins }
    }
}

impl<E: Endpoint> Endpoint for WithPlugins<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let path = req.uri().path().to_owned();
        let routed = target(&path).and_then(|t| self.plugins.get(t.plugin).map(|e| (t, e)));
        let Some((t, endpoint)) = routed else {
            return Ok(self.core.call(req).await?.into_response());
        };
        // Boxed, so that the core's requests do not carry this branch's state.
        Box::pin(admit(&mut req, &t)).await?;
        endpoint.call(req).await
    }
}

/// Checks the caller and the plugin for a request to a plugin's endpoint, and leaves the
/// checked access in the request's data.
async fn admit(req: &mut Request, t: &Target<'_>) -> Result<(), ApiError> {
    let caller = authenticate(req).await?;
    let state = req
        .data::<AppState>()
        .cloned()
        .ok_or_else(ApiError::internal)?;
    match t.event {
        Some(event) => {
            let access = caller.event(&state.db, t.organizer, event, None).await?;
            if !state.plugins.active_for(t.plugin, Some(&access.event)) {
                return Err(not_enabled());
            }
            req.extensions_mut().insert::<EventAccess>(access);
        }
        None => {
            let access = caller.organizer(t.organizer, None)?;
            if !state.plugins.active_for(t.plugin, None) {
                return Err(not_enabled());
            }
            req.extensions_mut().insert::<OrganizerAccess>(access);
        }
    }
    req.extensions_mut().insert(caller);
    Ok(())
}

fn not_enabled() -> ApiError {
    ApiError::not_found("This plugin is not enabled here.")
}

/// Merges the plugins' OpenAPI descriptions into the core's document. Paths outside a
/// plugin's own prefixes are left out, with an error in the log.
pub fn merge_specs(doc: &mut Value, registry: &PluginRegistry) {
    for plugin in registry.all() {
        let Some(api) = plugin.api() else { continue };
        let name = plugin.name();
        let own = |path: &str| target(path).is_some_and(|t| t.plugin == name);
        if let Some(paths) = api.spec.get("paths").and_then(Value::as_object) {
            for (path, item) in paths {
                if own(path) {
                    insert_missing(doc, &["paths"], path, item);
                } else {
                    tracing::error!(
                        plugin = name,
                        path,
                        "plugin path outside its prefix left out"
                    );
                }
            }
        }
        if let Some(components) = api.spec.get("components").and_then(Value::as_object) {
            for (kind, entries) in components {
                for (key, value) in entries.as_object().into_iter().flatten() {
                    insert_missing(doc, &["components", kind], key, value);
                }
            }
        }
        for tag in api
            .spec
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let tags = doc
                .as_object_mut()
                .map(|d| d.entry("tags").or_insert_with(|| Value::Array(Vec::new())));
            if let Some(Value::Array(tags)) = tags
                && !tags.iter().any(|t| t.get("name") == tag.get("name"))
            {
                tags.push(tag.clone());
            }
        }
    }
}

/// Sets `doc[at...][key]` unless it is set: the core's entries win over a plugin's.
fn insert_missing(doc: &mut Value, at: &[&str], key: &str, value: &Value) {
    let mut node = doc;
    for step in at {
        let Some(object) = node.as_object_mut() else {
            return;
        };
        node = object
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(object) = node.as_object_mut() {
        object.entry(key).or_insert_with(|| value.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::{Target, target};

    #[test]
    fn plugin_prefixes_are_read_from_paths() {
        assert_eq!(
            target("/api/v1/organizers/o/events/e/plugins/bank/import/"),
            Some(Target {
                organizer: "o",
                event: Some("e"),
                plugin: "bank"
            })
        );
        assert_eq!(
            target("/api/v1/organizers/o/plugins/bank"),
            Some(Target {
                organizer: "o",
                event: None,
                plugin: "bank"
            })
        );
        assert_eq!(target("/api/v1/organizers/o/events/e/orders/"), None);
        assert_eq!(
            target("/api/v1/organizers/{organizer}/events/{event}/plugins/bank/import")
                .map(|t| t.plugin),
            Some("bank")
        );
    }
}
