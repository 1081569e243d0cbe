//! Sources: where transactions enter Vigil. [`http`] serves the spec's monitoring endpoints;
//! [`kafka`] joins a consumer group on the input topic. Both hand validated transactions to the
//! engine's router.

pub mod http;
pub mod kafka;
