//! Name screening of a transaction's parties against sanctions and PEP lists.
//!
//! The engine calls a [`Screener`] once per evaluation, from the shard thread, with the snapshot it
//! took for the event; the screener answers the spec's `screening` block and the facts rules see.
//! Until list loading lands (the screening issue) the embedded default is [`NoScreening`], which
//! answers "clear" for every party and says so on `/readyz`.

use crate::engine::rules::ScreeningFacts;
use crate::model::{ScreeningOutcome, Transaction};

/// Screens the sender and receiver names of a transaction.
pub trait Screener: Send + Sync + std::fmt::Debug {
    fn screen(&self, tenant: i64, tx: &Transaction) -> (ScreeningOutcome, ScreeningFacts);

    /// A short description for `/readyz`.
    fn describe(&self) -> String;
}

/// Screens nothing: every party is "clear".
#[derive(Debug, Default, Clone, Copy)]
pub struct NoScreening;

impl Screener for NoScreening {
    fn screen(&self, _tenant: i64, _tx: &Transaction) -> (ScreeningOutcome, ScreeningFacts) {
        (ScreeningOutcome::default(), ScreeningFacts::default())
    }

    fn describe(&self) -> String {
        "no sanctions or PEP lists loaded".to_owned()
    }
}
