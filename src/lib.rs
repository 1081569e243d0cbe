//! Vigil: an open transaction-monitoring and AML compliance engine.
//!
//! Data flows from the sources (HTTP intake, later Kafka) through the sharded [`engine`] (router,
//! shards, per-user state, Rhai rules) and [`screening`] into the sinks (the [`store`]'s
//! group-commit writer). The [`api`] serves the spec's endpoints on top; [`server`] wires it all for
//! `vigil serve`, [`replay`] runs the engine offline.
//!
//! The compliance workflows sit beside the engine on the same store: [`cases`] (opened
//! automatically by the store writer for every decision that is not approved, and worked by
//! analysts), [`cdd`] customers with their risk rating, [`edd`] requests through configured
//! pipelines, and the append-only [`audit`] trail of every change to them.
//!
//! [`identity`] answers NIN, BVN and CAC lookups through a provider (the store-backed local
//! registry or an upstream HTTP provider) and runs the CDD identity verifications on them;
//! [`reporting`] fetches transaction records from a client's endpoint and builds goAML reports
//! for the financial intelligence unit.
//!
//! Every call to an address a client or operator gave goes through [`outbound`] (one address
//! policy, connections pinned to the checked addresses, no proxy, no redirects, HMAC signing).
//!
//! Asynchronous AML sits on the same store: [`webhooks`] (the durable outbox, signed delivery with
//! retries), [`media`] (the adverse-media index and search) and [`monitoring`]
//! (asynchronous sanction and adverse-media requests, risk-monitoring checks that keep watching).

pub mod api;
pub mod audit;
pub mod cases;
pub mod cdd;
pub mod config;
pub mod edd;
pub mod engine;
pub mod identity;
pub mod media;
pub mod metrics;
pub mod model;
pub mod monitoring;
pub mod outbound;
pub mod replay;
pub mod reporting;
pub mod screening;
pub mod server;
pub mod sinks;
pub mod sources;
pub mod store;
pub mod webhooks;
