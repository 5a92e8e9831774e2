//! The platform's components.

use std::fmt;
use std::str::FromStr;

use crate::routes::{ROUTES, Route};

/// A component the platform ships, each serving a group of endpoints (or, `reconcile`, a
/// queue topic). Its name is its file (`<name>.wasm`), its CLI argument, its metrics label and
/// what its secrets and bank are named after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    Listing,
    Booking,
    SelfCheckIn,
    BankOne,
    BankTwo,
    Reconcile,
}

/// The world a component is linked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum World {
    /// `platform`: context and store.
    Api,
    /// `webhook-platform`: the platform plus the component's secrets and the bank.
    Webhook,
}

/// The version of the WIT package `rental:platform` (`wit/platform.wit`) that this release's
/// host offers and its components import.
pub const WIT_VERSION: &str = "0.1.0";

impl World {
    /// The world's name in `wit/platform.wit`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Api => "platform",
            Self::Webhook => "webhook-platform",
        }
    }

    /// The `rental:platform` interfaces it offers.
    pub const fn interfaces(self) -> &'static [&'static str] {
        match self {
            Self::Api => &["context", "store"],
            Self::Webhook => &["context", "store", "secrets", "bank"],
        }
    }
}

impl Component {
    /// Every platform component, in the order they are listed and loaded.
    pub const ALL: [Self; 6] = [
        Self::Listing,
        Self::Booking,
        Self::SelfCheckIn,
        Self::BankOne,
        Self::BankTwo,
        Self::Reconcile,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Self::Listing => "listing",
            Self::Booking => "booking",
            Self::SelfCheckIn => "selfcheckin",
            Self::BankOne => "bankone",
            Self::BankTwo => "banktwo",
            Self::Reconcile => "reconcile",
        }
    }

    /// The world it is linked against: the bank webhooks get their own secrets and the bank;
    /// every other component gets the `platform` world only, and fails to load if it imports
    /// more.
    pub const fn world(self) -> World {
        match self {
            Self::BankOne | Self::BankTwo => World::Webhook,
            Self::Listing | Self::Booking | Self::SelfCheckIn | Self::Reconcile => World::Api,
        }
    }

    /// The routes it serves; none for `reconcile`, which the queue consumer runs.
    pub fn routes(self) -> impl Iterator<Item = &'static Route> {
        ROUTES.iter().filter(move |r| r.component == self)
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is none of the platform's components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownComponent(pub String);

impl fmt::Display for UnknownComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown component {:?}; the platform's components are: ",
            self.0
        )?;
        for (i, component) in Component::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(component.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownComponent {}

impl FromStr for Component {
    type Err = UnknownComponent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| UnknownComponent(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for component in Component::ALL {
            assert_eq!(component.name().parse(), Ok(component));
            assert_eq!(component.to_string(), component.name());
        }
        assert_eq!(
            "Listing".parse::<Component>().unwrap_err().to_string(),
            "unknown component \"Listing\"; the platform's components are: listing, booking, \
             selfcheckin, bankone, banktwo, reconcile"
        );
    }

    #[test]
    fn only_the_bank_webhooks_get_the_webhook_world() {
        let webhook: Vec<_> = Component::ALL
            .into_iter()
            .filter(|c| c.world() == World::Webhook)
            .collect();
        assert_eq!(webhook, [Component::BankOne, Component::BankTwo]);
    }

    #[test]
    fn every_component_but_reconcile_serves_routes() {
        for component in Component::ALL {
            assert_eq!(
                component.routes().next().is_none(),
                component == Component::Reconcile,
                "{component}"
            );
        }
    }
}
