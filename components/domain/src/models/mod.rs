//! The API models of interface.md section 2, plus the catalogue models the contract adds
//! (tariffs, booking comments, branch offices).
//!
//! JSON names are the interface's, PascalCase, spelled exactly as it spells them
//! (`IlimitedKm`, `TotalPayed`, `SalesCommision`, `ElegibleSIPPCodeUpgrade`, `IATACode`...).
//! Every field is always written; a nullable field is an `Option` written as `null`.
//! Identifiers, counts, flags and amounts that always have a value are plain types; texts,
//! dates and references that the interface leaves open ("unless said otherwise, a field can be
//! null") are `Option`. Fields whose content type the interface does not show are
//! `Option<serde_json::Value>`, kept as sent.
//!
//! Reading is lenient so that stored documents and partial request bodies load: missing
//! optional fields take their default. Money is [`rust_decimal::Decimal`], written as a JSON
//! number with its exact digits and read exactly: the workspace enables rust_decimal's
//! `serde-float` together with `serde-arbitrary-precision`, which writes the decimal's own
//! digits through serde_json's `arbitrary_precision` (never through `f64`) and reads a JSON
//! number from its text. `arbitrary_precision` breaks `#[serde(flatten)]` and untagged enums,
//! so no model uses them.
//! Date-times are `DateTime<FixedOffset>`, read as [`crate::json::date_time`] describes.

mod booking;
mod customer;
mod fleet;
mod place;
mod pricing;
mod response;

pub use booking::{
    Booking, BookingComment, BookingDescription, CategorySummary, ModelSummary, PriceDetails,
};
pub use customer::{CreditCard, Customer, Membership};
pub use fleet::{Car, CarPlate, Category, Model, ModelAttribute, ModelBrand};
pub use place::{BranchOffice, Place};
pub use pricing::{
    Additional, AppliedCoverageBracket, BookingAdditional, PriceItem, Tariff, TariffBracket,
};
pub use response::{ErrorResponse, PagedResult, Piece, RenderedItem};

#[cfg(test)]
mod tests;
