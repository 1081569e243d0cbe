//! Tenant-scoped blacklists (users, accounts, devices, VAS receivers) as an immutable snapshot.
//!
//! Writers (the list endpoints, after the store has made the change durable) build a new snapshot
//! and publish it through the engine's arc-swap; readers (shards) look values up in the snapshot
//! they took for the event, without locks. The sets are persistent (`imbl`), so a write copies
//! O(log n) nodes, not the list.

use std::sync::Arc;

use imbl::{HashMap, HashSet};
use serde::{Deserialize, Serialize};

use super::rules::ListFacts;
use crate::model::Transaction;

/// Which list an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListKind {
    User,
    Account,
    Device,
    VasReceiver,
}

impl ListKind {
    pub const ALL: [ListKind; 4] = [
        ListKind::User,
        ListKind::Account,
        ListKind::Device,
        ListKind::VasReceiver,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ListKind::User => "user",
            ListKind::Account => "account",
            ListKind::Device => "device",
            ListKind::VasReceiver => "vas-receiver",
        }
    }

    pub fn parse(value: &str) -> Option<ListKind> {
        ListKind::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

#[derive(Debug, Clone, Default)]
pub struct TenantLists {
    users: HashSet<Arc<str>>,
    accounts: HashSet<Arc<str>>,
    devices: HashSet<Arc<str>>,
    vas_receivers: HashSet<Arc<str>>,
}

impl TenantLists {
    fn set(&self, kind: ListKind) -> &HashSet<Arc<str>> {
        match kind {
            ListKind::User => &self.users,
            ListKind::Account => &self.accounts,
            ListKind::Device => &self.devices,
            ListKind::VasReceiver => &self.vas_receivers,
        }
    }

    fn set_mut(&mut self, kind: ListKind) -> &mut HashSet<Arc<str>> {
        match kind {
            ListKind::User => &mut self.users,
            ListKind::Account => &mut self.accounts,
            ListKind::Device => &mut self.devices,
            ListKind::VasReceiver => &mut self.vas_receivers,
        }
    }

    pub fn contains(&self, kind: ListKind, value: &str) -> bool {
        self.set(kind).contains(value)
    }

    /// Looks the transaction's parties up in every list.
    pub fn facts(&self, tx: &Transaction) -> ListFacts {
        let data = tx.data();
        let check = |kind, value: Option<&str>| value.is_some_and(|v| self.contains(kind, v));
        ListFacts {
            user: self.contains(ListKind::User, &tx.user_id),
            sender_account: check(ListKind::Account, data.sender_account.as_deref()),
            receiver_account: check(ListKind::Account, data.receiver_account.as_deref())
                || check(
                    ListKind::Account,
                    tx.payload
                        .counterparty_data
                        .as_ref()
                        .and_then(|c| c.account_number.as_deref()),
                ),
            device: check(ListKind::Device, tx.device_id()),
            vas_receiver: check(ListKind::VasReceiver, data.vas_receiver.as_deref()),
        }
    }

    pub fn len(&self, kind: ListKind) -> usize {
        self.set(kind).len()
    }
}

/// Every tenant's lists.
#[derive(Debug, Clone, Default)]
pub struct Lists {
    tenants: HashMap<i64, TenantLists>,
}

static EMPTY: std::sync::LazyLock<TenantLists> = std::sync::LazyLock::new(TenantLists::default);

impl Lists {
    pub fn tenant(&self, tenant: i64) -> &TenantLists {
        self.tenants.get(&tenant).unwrap_or(&EMPTY)
    }

    /// A copy with `value` added; the copy shares all untouched structure.
    pub fn with_added(&self, tenant: i64, kind: ListKind, value: &str) -> Lists {
        let mut next = self.clone();
        let lists = next.tenants.entry(tenant).or_default();
        lists.set_mut(kind).insert(Arc::from(value));
        next
    }

    pub fn with_removed(&self, tenant: i64, kind: ListKind, value: &str) -> Lists {
        let mut next = self.clone();
        if let Some(lists) = next.tenants.get_mut(&tenant) {
            lists.set_mut(kind).remove(value);
        }
        next
    }

    /// Builds the lists from stored entries (tenant, kind, value).
    pub fn from_entries(entries: impl IntoIterator<Item = (i64, ListKind, String)>) -> Lists {
        let mut lists = Lists::default();
        for (tenant, kind, value) in entries {
            lists
                .tenants
                .entry(tenant)
                .or_default()
                .set_mut(kind)
                .insert(Arc::from(value.as_str()));
        }
        lists
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_never_see_each_others_lists() {
        let lists = Lists::default().with_added(1, ListKind::User, "u1");
        assert!(lists.tenant(1).contains(ListKind::User, "u1"));
        assert!(!lists.tenant(2).contains(ListKind::User, "u1"));
        assert!(!lists.tenant(1).contains(ListKind::Account, "u1"));
    }

    #[test]
    fn removal_leaves_the_previous_snapshot_untouched() {
        let before = Lists::default().with_added(1, ListKind::Device, "d1");
        let after = before.with_removed(1, ListKind::Device, "d1");
        assert!(before.tenant(1).contains(ListKind::Device, "d1"));
        assert!(!after.tenant(1).contains(ListKind::Device, "d1"));
    }
}
