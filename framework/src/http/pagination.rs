//! The paginated list envelope `{count, next, previous, results}` with absolute URLs.

use std::borrow::Cow;

use poem::Request;
use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ToJSON, Type};
use serde_json::{Value, json};

use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, QuerySelect, Select};

use super::error::{ApiError, Refusal};
use super::middleware::original_uri;

/// Default and largest page size; `page_size` can only lower it.
pub const PAGE_SIZE: u64 = 50;

/// Which slice of a list to fetch, from the `page` and `page_size` query parameters.
#[derive(Debug, Clone)]
pub struct PageRequest {
    page: Option<String>,
    size: u64,
    base: String,
    path_and_query: String,
}

impl PageRequest {
    /// Reads the page request. `base` is the public base URL without trailing slash.
    pub fn new(req: &Request, base: &str, page: Option<String>, page_size: Option<u64>) -> Self {
        Self::sized(req, base, page, page_size, PAGE_SIZE)
    }

    /// Reads the page request of a list whose default and largest page size is `largest`
    /// instead of [`PAGE_SIZE`] (pretalx's rooms: 100).
    pub fn sized(
        req: &Request,
        base: &str,
        page: Option<String>,
        page_size: Option<u64>,
        largest: u64,
    ) -> Self {
        let size = page_size
            .filter(|&s| s > 0)
            .map_or(largest, |s| s.min(largest));
        Self {
            page,
            size,
            base: base.to_owned(),
            path_and_query: original_uri(req),
        }
    }

    /// The page of a list held in memory, each item shown with `show`; 404 for a page that
    /// does not exist.
    pub fn page_of<I, U>(
        &self,
        items: I,
        show: impl FnMut(I::Item) -> U,
    ) -> Result<Page<U>, ApiError>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
    {
        let items = items.into_iter();
        let window = self.window(items.len() as u64)?;
        let results = items
            .skip(window.offset as usize)
            .take(window.limit as usize)
            .map(show)
            .collect();
        Ok(window.page(results))
    }

    /// Resolves the page against the total count: `(limit, offset)`, or 404 for a page that
    /// does not exist. Page 1 always exists, even for an empty list.
    pub fn window(&self, count: u64) -> Result<Window, Refusal> {
        let pages = count.div_ceil(self.size).max(1);
        let number = match self.page.as_deref() {
            None => 1,
            Some("last") => pages,
            Some(p) => p
                .parse::<u64>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(invalid_page)?,
        };
        if number > pages {
            return Err(invalid_page());
        }
        let url = |n: u64| self.url_for(n);
        Ok(Window {
            limit: self.size,
            offset: (number - 1) * self.size,
            count,
            next: (number < pages).then(|| url(number + 1)),
            previous: (number > 1).then(|| url(number - 1)),
        })
    }

    fn url_for(&self, page: u64) -> String {
        let (path, query) = self
            .path_and_query
            .split_once('?')
            .unwrap_or((&self.path_and_query, ""));
        let mut params: Vec<String> = query
            .split('&')
            .filter(|p| !str::is_empty(p) && !p.starts_with("page=") && *p != "page")
            .map(str::to_owned)
            .collect();
        if page > 1 {
            params.push(format!("page={page}"));
        }
        if params.is_empty() {
            format!("{}{path}", self.base)
        } else {
            format!("{}{path}?{}", self.base, params.join("&"))
        }
    }
}

impl PageRequest {
    /// Counts the rows of a query, resolves the page and fetches its rows: two queries.
    pub async fn fetch<E>(
        &self,
        db: &impl ConnectionTrait,
        select: Select<E>,
    ) -> Result<Page<E::Model>, ApiError>
    where
        E: EntityTrait,
        E::Model: Sync,
    {
        let window = self.window(select.clone().count(db).await?)?;
        let rows = select
            .limit(window.limit)
            .offset(window.offset)
            .all(db)
            .await?;
        Ok(window.page(rows))
    }
}

fn invalid_page() -> Refusal {
    Refusal::not_found("Invalid page.")
}

/// A resolved page: what to fetch, and the envelope's links.
#[derive(Debug, Clone)]
pub struct Window {
    /// Rows to fetch.
    pub limit: u64,
    /// Rows to skip.
    pub offset: u64,
    count: u64,
    next: Option<String>,
    previous: Option<String>,
}

impl Window {
    /// Wraps the fetched rows in the envelope.
    pub fn page<T>(self, results: Vec<T>) -> Page<T> {
        Page {
            count: self.count,
            next: self.next,
            previous: self.previous,
            results,
        }
    }

    /// The page of a list held whole in memory (a short one, such as an event's layouts).
    pub fn slice<T>(self, all: Vec<T>) -> Page<T> {
        let (offset, limit) = (self.offset as usize, self.limit as usize);
        let results = all.into_iter().skip(offset).take(limit).collect();
        self.page(results)
    }
}

/// The paginated list envelope.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// Total number of objects.
    pub count: u64,
    /// Absolute URL of the next page.
    pub next: Option<String>,
    /// Absolute URL of the previous page.
    pub previous: Option<String>,
    /// The objects of this page.
    pub results: Vec<T>,
}

impl<T> Page<T> {
    /// The page's objects, and a page of `U` to fill with others in their place.
    pub fn take_results<U>(self) -> (Vec<T>, impl FnOnce(Vec<U>) -> Page<U>) {
        let (count, next, previous) = (self.count, self.next, self.previous);
        (self.results, move |results| Page {
            count,
            next,
            previous,
            results,
        })
    }

    /// The same page with each object turned into another.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            count: self.count,
            next: self.next,
            previous: self.previous,
            results: self.results.into_iter().map(f).collect(),
        }
    }
}

impl<T: Type> Type for Page<T> {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        format!("Paginated_{}", T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Reference(Self::name().into_owned())
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
        registry.create_schema::<Self, _>(Self::name().into_owned(), |_| {
            let mut schema = MetaSchema::new("object");
            let mut url = MetaSchema::new_with_format("string", "uri");
            url.nullable = true;
            let url = MetaSchemaRef::Inline(Box::new(url));
            let mut results = MetaSchema::new("array");
            results.items = Some(Box::new(T::schema_ref()));
            schema.properties = vec![
                ("count", u64::schema_ref()),
                ("next", url.clone()),
                ("previous", url),
                ("results", MetaSchemaRef::Inline(Box::new(results))),
            ];
            schema.required = vec!["count", "next", "previous", "results"];
            schema
        });
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(std::iter::once(self))
    }
}

impl<T: ToJSON> ToJSON for Page<T> {
    fn to_json(&self) -> Option<Value> {
        Some(json!({
            "count": self.count,
            "next": self.next,
            "previous": self.previous,
            "results": self.results.iter().map(|r| r.to_json().unwrap_or(Value::Null)).collect::<Vec<_>>(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(uri: &str, page: Option<&str>, size: Option<u64>, count: u64) -> Window {
        let req = Request::builder().uri(uri.parse().expect("uri")).finish();
        PageRequest::new(&req, "https://t.example", page.map(str::to_owned), size)
            .window(count)
            .expect("page")
    }

    #[test]
    fn links_keep_the_other_query_parameters_and_replace_the_page() {
        let w = page("/api/v1/x/", None, None, 120);
        assert_eq!(
            w.next.as_deref(),
            Some("https://t.example/api/v1/x/?page=2")
        );
        let w = page("/api/v1/x/?page=2&secret=a", Some("2"), None, 120);
        assert_eq!(
            w.next.as_deref(),
            Some("https://t.example/api/v1/x/?secret=a&page=3")
        );
        assert_eq!(
            w.previous.as_deref(),
            Some("https://t.example/api/v1/x/?secret=a")
        );
        let w = page("/api/v1/x/?page=last", Some("last"), Some(10), 25);
        assert_eq!((w.offset, w.limit), (20, 10));
    }
}
