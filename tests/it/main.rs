//! Vigil's integration tests, in one test binary.
//!
//! Each module tests one part of the service from the outside: most start a real service on
//! loopback through `common::Harness` (against embedded SQLite and, through `on_both_backends!`,
//! a PostgreSQL server that `scripts/test.sh` starts), `cli` runs the built `vigil` binary, and
//! the fixture and quality modules run the data-driven rule and screening fixtures. They live in
//! one binary so the suite links once instead of once per file: with every dependency linked in,
//! a test binary is hundreds of megabytes, and sixteen of them filled the CI machine's disk.

#[macro_use]
mod common;

mod api;
mod async_aml;
mod cases;
mod cdd;
mod cli;
mod edd;
mod identity;
mod kafka;
mod native_rules;
mod openapi_contract;
mod outbound;
mod reporting;
mod rules_fixtures;
mod screening;
mod screening_quality;
mod store_backends;
mod tenancy;
mod webhooks;
