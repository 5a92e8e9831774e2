//! The codes of price lines: what a line charges for, who pays it, which surcharge.

/// What a price line charges for: `PriceItem.Type` (values not shown by the interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum PriceItemType {
    /// Rental days of one tariff bracket; `TypeId` is the tariff's id.
    Rental = 1,
    /// An additional; `TypeId` is the additional's id.
    Additional = 2,
    /// Delivery or return at a place; `TypeId` is the place's id.
    Place = 3,
    /// A surcharge; `TypeId` is a [`SurchargeKind`].
    Surcharge = 4,
    /// The difference between a sent price and the computed one; `TypeId` is 0.
    Adjustment = 5,
    /// A line a tenant's own build of the booking component adds ([`super::Adjustment`]);
    /// `TypeId` is the tenant's code for it.
    TenantAdjustment = 6,
}

impl PriceItemType {
    /// The value of `PriceItem.Type`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

/// Who pays a price line: `PriceItem.Payer` (values not shown by the interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum Payer {
    /// The customer (driver) pays.
    Customer = 1,
    /// The agency the booking came through pays.
    Agency = 2,
}

impl Payer {
    /// The value of `PriceItem.Payer`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

/// Which surcharge a [`PriceItemType::Surcharge`] line charges: its `TypeId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum SurchargeKind {
    /// The car is returned to another branch office than the one it was delivered by.
    OneWay = 1,
    /// A pick-up or a return outside office hours (one line each).
    OutOfHours = 2,
    /// The driver is under [`YOUNG_DRIVER_AGE`](super::YOUNG_DRIVER_AGE) (per rental day).
    YoungDriver = 3,
}

impl SurchargeKind {
    /// The value of `PriceItem.TypeId`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

#[cfg(test)]
mod tests;
