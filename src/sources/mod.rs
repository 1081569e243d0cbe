//! Sources: where transactions enter Vigil. [`http`] serves the spec's monitoring endpoints; the
//! Kafka consumer joins it with the streaming issue. Both hand validated transactions to the
//! engine's router.

pub mod http;
