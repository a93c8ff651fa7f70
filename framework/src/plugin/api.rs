//! Plugins' HTTP endpoints. Each plugin answers under its own prefixes,
//! `/api/v1/organizers/{organizer}/events/{event}/plugins/{name}/` and
//! `/api/v1/organizers/{organizer}/plugins/{name}/`, and may add resources at the organizer
//! and event roots (`/api/v1/organizers/{organizer}/<resource>/`,
//! `.../events/{event}/<resource>/`) as pretix's plugins do, though never one the core
//! serves: such a resource is refused at start, with one line in the log. Before a plugin
//! sees a request, the core authenticates the caller (401), checks that the caller may see
//! the organizer and event (403) and that the plugin is active there (404), and hands the
//! checked access on as request data ([`EventAccess`] or [`OrganizerAccess`], and the
//! [`Caller`](crate::domain::grants::Caller)). Errors, rate limits, request logs and
//! idempotency keys are the core's as for any other path.

use std::collections::{HashMap, HashSet};

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
    /// plugin's prefixes or at the roots, take `auth: Auth` for the security scheme, and
    /// read the checked access with `Data<&EventAccess>` (or `Data<&OrganizerAccess>`).
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

/// Where a path leads below an organizer: a plugin's own prefix, or a resource at the
/// organizer's or an event's root.
#[derive(Debug, PartialEq, Eq)]
enum Place<'a> {
    /// `plugins/{name}/...`
    Own(&'a str),
    /// `{resource}/...`
    Root(&'a str),
}

/// The organizer, the event (for event-scoped paths) and the place of a path.
#[derive(Debug, PartialEq, Eq)]
struct Target<'a> {
    organizer: &'a str,
    event: Option<&'a str>,
    place: Place<'a>,
}

fn target(path: &str) -> Option<Target<'_>> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (organizer, event, rest) = match segments.as_slice() {
        [
            "api",
            "v1",
            "organizers",
            organizer,
            "events",
            event,
            rest @ ..,
        ] => (*organizer, Some(*event), rest),
        ["api", "v1", "organizers", organizer, rest @ ..] if rest.first() != Some(&"events") => {
            (*organizer, None, rest)
        }
        _ => return None,
    };
    let place = match rest {
        ["plugins", plugin, ..] => Place::Own(plugin),
        [resource, ..] => Place::Root(resource),
        [] => return None,
    };
    Some(Target {
        organizer,
        event,
        place,
    })
}

/// Which plugin answers which path: the plugins' own prefixes, and the resources each adds
/// at the organizer and event roots. Built once at start from the core's document, which
/// no plugin may shadow.
pub struct Mounts {
    endpoints: HashMap<String, BoxEndpoint<'static>>,
    /// Organizer-level resources, by name, and the plugin serving each.
    organizer_roots: HashMap<String, String>,
    /// Event-level resources, likewise.
    event_roots: HashMap<String, String>,
    /// Each plugin's description, with only the paths it may serve.
    specs: Vec<(String, Value)>,
}

impl Mounts {
    /// Mounts every plugin's endpoints beside the core's, whose paths are those of `core`
    /// (an OpenAPI document). A plugin's path outside its prefixes and the roots, and a
    /// resource the core or an earlier plugin already serves, are left out, each with an
    /// error in the log.
    pub fn new(registry: &PluginRegistry, core: &Value) -> Self {
        let mut taken: HashSet<(bool, String)> = HashSet::new();
        for path in core
            .get("paths")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
        {
            if let Some(Target {
                event,
                place: Place::Root(resource),
                ..
            }) = target(path)
            {
                taken.insert((event.is_some(), resource.to_owned()));
            }
        }
        let mut mounts = Self {
            endpoints: HashMap::new(),
            organizer_roots: HashMap::new(),
            event_roots: HashMap::new(),
            specs: Vec::new(),
        };
        for plugin in registry.all() {
            let Some(api) = plugin.api() else { continue };
            let name = plugin.name().to_owned();
            let mut spec = api.spec;
            let mut refused: HashSet<(bool, String)> = HashSet::new();
            if let Some(paths) = spec.get_mut("paths").and_then(Value::as_object_mut) {
                paths.retain(|path, _| {
                    let Some(t) = target(path) else {
                        tracing::error!(
                            plugin = name,
                            path,
                            "plugin path outside its prefix and the API roots left out"
                        );
                        return false;
                    };
                    let resource = match t.place {
                        Place::Own(p) if p == name => return true,
                        Place::Own(_) => {
                            tracing::error!(
                                plugin = name,
                                path,
                                "plugin path under another plugin's prefix left out"
                            );
                            return false;
                        }
                        Place::Root(resource) => resource,
                    };
                    let key = (t.event.is_some(), resource.to_owned());
                    let roots = match t.event {
                        Some(_) => &mut mounts.event_roots,
                        None => &mut mounts.organizer_roots,
                    };
                    if roots.get(resource) == Some(&name) {
                        return true;
                    }
                    if taken.contains(&key) || roots.contains_key(resource) {
                        if refused.insert(key) {
                            tracing::error!(
                                plugin = name,
                                resource,
                                "plugin resource refused: the path is already served"
                            );
                        }
                        return false;
                    }
                    roots.insert(resource.to_owned(), name.clone());
                    true
                });
            }
            mounts.endpoints.insert(name.clone(), api.endpoint);
            mounts.specs.push((name, spec));
        }
        mounts
    }

    /// The plugin answering a request path, with where it leads.
    fn route<'a>(&'a self, path: &'a str) -> Option<(Target<'a>, &'a str)> {
        let t = target(path)?;
        let plugin = match t.place {
            Place::Own(plugin) => plugin,
            Place::Root(resource) => match t.event {
                Some(_) => self.event_roots.get(resource)?,
                None => self.organizer_roots.get(resource)?,
            },
        };
        Some((t, plugin))
    }
}

/// The core's endpoint with the plugins' endpoints beside it.
pub struct WithPlugins<E> {
    core: E,
    mounts: std::sync::Arc<Mounts>,
}

impl<E> WithPlugins<E> {
    /// Routes each plugin's prefixes and resources to its endpoints, everything else to
    /// `core`.
    pub fn new(core: E, mounts: std::sync::Arc<Mounts>) -> Self {
        Self { core, mounts }
    }
}

impl<E: Endpoint> Endpoint for WithPlugins<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let path = req.uri().path().to_owned();
        let routed = self.mounts.route(&path).and_then(|(t, plugin)| {
            let endpoint = self.mounts.endpoints.get(plugin)?;
            Some((t, plugin, endpoint))
        });
        let Some((t, plugin, endpoint)) = routed else {
            return Ok(self.core.call(req).await?.into_response());
        };
        // Boxed, so that the core's requests do not carry this branch's state.
        Box::pin(admit(&mut req, &t, plugin)).await?;
        endpoint.call(req).await
    }
}

/// Checks the caller and the plugin for a request to a plugin's endpoint, and leaves the
/// checked access in the request's data.
async fn admit(req: &mut Request, t: &Target<'_>, plugin: &str) -> Result<(), ApiError> {
    let caller = authenticate(req).await?;
    let state = req
        .data::<AppState>()
        .cloned()
        .ok_or_else(ApiError::internal)?;
    match t.event {
        Some(event) => {
            let access = caller.event(&state.db, t.organizer, event, None).await?;
            if !state.plugins.active_for(plugin, Some(&access.event)) {
                return Err(not_enabled());
            }
            req.extensions_mut().insert::<EventAccess>(access);
        }
        None => {
            let access = caller.organizer(t.organizer, None)?;
            if !state.plugins.active_for(plugin, None) {
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

/// Merges the plugins' OpenAPI descriptions (the paths each may serve) into the core's
/// document; the core's components win over a plugin's of the same name.
pub fn merge_specs(doc: &mut Value, mounts: &Mounts) {
    for (_, spec) in &mounts.specs {
        if let Some(paths) = spec.get("paths").and_then(Value::as_object) {
            for (path, item) in paths {
                insert_missing(doc, &["paths"], path, item);
            }
        }
        if let Some(components) = spec.get("components").and_then(Value::as_object) {
            for (kind, entries) in components {
                for (key, value) in entries.as_object().into_iter().flatten() {
                    insert_missing(doc, &["components", kind], key, value);
                }
            }
        }
        for tag in spec
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
    use super::{Place, Target, target};

    #[test]
    fn plugin_prefixes_and_root_resources_are_read_from_paths() {
        assert_eq!(
            target("/api/v1/organizers/o/events/e/plugins/bank/import/"),
            Some(Target {
                organizer: "o",
                event: Some("e"),
                place: Place::Own("bank"),
            })
        );
        assert_eq!(
            target("/api/v1/organizers/o/plugins/bank"),
            Some(Target {
                organizer: "o",
                event: None,
                place: Place::Own("bank"),
            })
        );
        assert_eq!(
            target("/api/v1/organizers/o/bankimportjobs/3/"),
            Some(Target {
                organizer: "o",
                event: None,
                place: Place::Root("bankimportjobs"),
            })
        );
        assert_eq!(
            target("/api/v1/organizers/o/events/e/orders/").map(|t| t.place),
            Some(Place::Root("orders"))
        );
        assert_eq!(target("/api/v1/organizers/o/events/e/"), None);
        assert_eq!(target("/api/v1/organizers/o/events/"), None);
        assert_eq!(target("/api/v1/organizers/o/"), None);
        assert_eq!(
            target("/api/v1/organizers/{organizer}/events/{event}/plugins/bank/import")
                .map(|t| t.place),
            Some(Place::Own("bank"))
        );
    }
}
