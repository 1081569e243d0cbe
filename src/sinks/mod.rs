//! Sinks: where shard outputs go. [`store`] makes decisions durable (group commit) and answers the
//! waiting source; the Kafka sink joins it with the streaming issue.

pub mod store;
