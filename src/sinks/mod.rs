//! Sinks: where shard outputs go. [`store`] makes decisions durable (group commit) and answers the
//! waiting source; [`kafka`] writes the durable decisions, case events and dead letters of the
//! Kafka source to their topics, in input order.

pub mod kafka;
pub mod store;
