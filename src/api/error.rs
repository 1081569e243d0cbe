//! The one error type every HTTP handler returns. Bodies are always JSON:
//! `{"message": "...", "errors": [{"field": "...", "problem": "..."}]}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::model::{FieldError, ParseError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub errors: Vec<FieldError>,
}

/// The body of every error response: a message, and the fields at fault (empty when the problem
/// is not with one field).
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ApiError)]
pub struct ErrorBody<'a> {
    #[schema(example = "request validation failed")]
    pub message: &'a str,
    pub errors: &'a [FieldError],
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            errors: Vec::new(),
        }
    }

    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    pub fn field(status: StatusCode, message: &str, field: &str, problem: &str) -> Self {
        ApiError::new(status, message).with_errors(vec![FieldError::new(field, problem)])
    }

    /// 422 for a request whose fields are wrong.
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "request validation failed",
        )
        .with_errors(errors)
    }

    pub fn unauthorized() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or invalid apiKey/apiSecret headers",
        )
    }

    pub fn forbidden(message: &str) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// A failure that is ours, not the caller's. Logged; the body stays generic.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "internal error");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
}

impl From<ParseError> for ApiError {
    fn from(error: ParseError) -> Self {
        match error {
            ParseError::Syntax(problem) => ApiError::field(
                StatusCode::BAD_REQUEST,
                "malformed JSON body",
                "body",
                &problem,
            ),
            ParseError::Shape(field) => ApiError::invalid(vec![field]),
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> Self {
        tracing::error!(%error, "store error");
        ApiError::unavailable("storage is unavailable, retry later")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            message: &self.message,
            errors: &self.errors,
        };
        (self.status, axum::Json(body)).into_response()
    }
}
