//! Success responses shared by the resources.

use poem_openapi::ApiResponse;
use poem_openapi::payload::Json;
use poem_openapi::types::{ToJSON, Type};

/// 201 with the created object.
#[derive(ApiResponse)]
pub enum Created<T: ToJSON + Type + Send> {
    /// Created.
    #[oai(status = 201)]
    Created(Json<T>),
}

/// 204 without a body.
#[derive(ApiResponse)]
pub enum NoContent {
    /// Done.
    #[oai(status = 204)]
    NoContent,
}
