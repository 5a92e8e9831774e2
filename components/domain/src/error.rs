//! Error codes of the interface (section 7.2) and the domain's error type.
//!
//! [`ErrorCode`] is closed: every value of the interface's table is a variant, with the
//! interface's exact number and spelling (misspellings included), and nothing else is. A test
//! pins it to the table in `docs/interface.md`. [`ApiError`] is what every rule of this crate
//! returns; the component maps it to the error body ([`crate::ErrorResponse`]) in one place.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::i18n::Language;

/// Declares [`ErrorCode`] once and derives its lookup tables from the same list.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $name:ident = $code:literal, )*) => {
        /// An error code of the interface (section 7.2), serialized as its integer value.
        ///
        /// Values are not contiguous; behaviour is mapped from the exact value.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $name = $code, )*
        }

        impl ErrorCode {
            /// Every code, in the order of the interface's table.
            pub const ALL: &'static [ErrorCode] = &[$( ErrorCode::$name, )*];

            /// The interface's name of the code, e.g. `"InvlaidDates"`.
            pub const fn name(self) -> &'static str {
                match self {
                    $( ErrorCode::$name => stringify!($name), )*
                }
            }

            /// The code with this number, if the interface defines one.
            pub const fn from_code(code: i32) -> Option<Self> {
                match code {
                    $( $code => Some(ErrorCode::$name), )*
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    /// No error.
    NoError = 0,
    /// Customer not found.
    CustomerNotFound = 1,
    /// Car not found.
    CarNotFound = 2,
    /// Car not available for the dates.
    CarNotAvailable = 3,
    /// Computed price differs from the expected price.
    PriceMismatch = 4,
    /// Customer data invalid.
    CustomerDataNotValid = 5,
    /// Language unsupported.
    LanguageNotSupported = 6,
    /// User lacks permission.
    InsuficientPermissions = 7,
    /// No booking for the customer.
    BookingNotFoundForCustomer = 8,
    /// Status does not allow cancellation.
    BookingStatusNotAllowCancel = 9,
    /// Credit card not available.
    CreditCardNotAvailable = 10,
    /// Payment gateway unsupported.
    GatewayNotSupported = 11,
    /// Infraction not found.
    InfractionNotFound = 12,
    /// Dates invalid.
    InvlaidDates = 13,
    /// Reservation not quoted.
    UnquotedReserve = 14,
    /// Maximum days for a quoted reservation exceeded.
    MaxDayForQuotedReserve = 15,
    /// Tariff not found.
    TariffNotFound = 21,
    /// Booking not found.
    BookingNotFound = 22,
    /// Return place not found.
    ReturnPlaceNotFound = 23,
    /// Promotion not found.
    PromotionNotFound = 24,
    /// Delivery place not found.
    DeliveryPlaceNotFound = 25,
    /// Status does not allow update.
    BookingStatusNotAllowUpdate = 26,
    /// Unlimited kilometres not enabled.
    IlimitedKmNotEnabled = 27,
    /// Limited kilometres not enabled.
    LimitedKmNotEnabled = 28,
    /// Minimum booking days not reached.
    MinimunDaysOfBookingNotReached = 29,
    /// Maximum booking days exceeded.
    MaxDaysOfBookingReached = 30,
    /// Additional not found.
    AdditionalNotFound = 31,
    /// Additional maximum quantity exceeded.
    AdditionalMaxQuantityExceeded = 32,
    /// Start date not enabled.
    DateFromForBookingNotEnabled = 33,
    /// Driver age outside the allowed range.
    DriverAgeNotAllowed = 34,
    /// Version mismatch with the booking.
    BookingVersionError = 35,
    /// Booking already delivered.
    BookingAlreadyDelivered = 36,
    /// Booking already returned.
    BookingAlreadyReturned = 37,
    /// Deposit required to complete.
    BookingNeedsToCompleteDeposit = 38,
    /// Car kilometres invalid.
    InvalidCarKilometers = 39,
    /// Status does not allow delivery.
    BookingStatusNotAllowDelivery = 40,
    /// Driver licence invalid.
    DriverLicenseInvalid = 41,
    /// Status does not allow return.
    BookingStatusNotAllowReturn = 42,
    /// Entity related to the notification not found.
    NotificationRelatedEntityNotFound = 43,
    /// Notification receiver address invalid.
    NotificationReceiverAddressInvalid = 44,
    /// Mail notifications disabled.
    MailNotificationDisabled = 45,
    /// Return place not allowed for the delivery place.
    ReturnPlaceNotAllowedForDeliveryPlace = 46,
    /// Booking outside office hours not allowed.
    BookingOutOfOfficeHoursNotAllowed = 47,
    /// Notification not found.
    NotificationNotFound = 48,
    /// Customer blocked from booking.
    BlockedCustomerToBook = 49,
    /// System configuration requires at least one insurance when creating or changing a booking.
    MustHaveAtLeastOneInsurance = 50,
    /// Commercial agreement invalid.
    InvalidCommercialAgreement = 51,
    /// Application protocol not found.
    AppProtocolNotFound = 60,
    /// Service type invalid.
    ServiceTypeInvalid = 61,
    /// Service status invalid.
    ServiceStatusInvalid = 62,
    /// Service dates invalid.
    ServiceDatesInvalids = 63,
    /// Service provider not found.
    ServiceProviderNotFound = 64,
    /// Service cannot be created.
    ServiceCanNotCreate = 65,
    /// Service cannot be edited.
    ServiceCanNotEdit = 66,
    /// Service not found.
    ServiceNotFound = 67,
    /// Car location has an invalid driver.
    CarLocationInvalidDriver = 68,
    /// Return place equals current place.
    ReturnPlaceIsCurrentPlaceError = 69,
    /// Car not free for the operation.
    CarIsNotFree = 70,
    /// Error during car transfer.
    CarTransferError = 71,
    /// Car fuel level invalid.
    InvalidCarGasoline = 72,
    /// Cannot deliver a booking with outstanding balance.
    CannotDeliverBookingWithBalance = 73,
    /// Place does not accept custom addresses.
    PlaceDoesNotAcceptCustomAddresses = 74,
    /// Place cannot act as pick-up.
    PlaceCantOperatesLikePickUp = 75,
    /// Place cannot act as drop-off.
    PlaceCantOperatesLikeDropOff = 76,
    /// Quote cannot be paid.
    CannotPayQuote = 77,
    /// Feature not enabled.
    FeatureNotEnabled = 80,
    /// Model invalid.
    ModelNotValid = 98,
    /// Unknown error.
    Unknown = 99,
    /// Currency code missing.
    MissingCurrencyCode = 100,
    /// Total must be greater than zero.
    TotalGreaterThanZero = 101,
    /// Infraction record already exists.
    InfractionAlreadyExists = 102,
    /// Incident type invalid.
    InvalidIncidentType = 103,
    /// Incident date invalid.
    InvalidIncidentDate = 104,
    /// Required setting not found.
    SettingNotFound = 105,
    /// Booking brand not found.
    BookingBrandNotFound = 106,
    /// A canceled booking cannot be reactivated (no description in the interface).
    BookingCannotBeUncancelled = 107,
    /// A rate with the given code already exists and no update was requested.
    RateAlreadyExists = 108,
    /// More than one active customer shares the same GlobalId, so the customer cannot be
    /// resolved; a data-integrity problem (GlobalId must be unique).
    DuplicateCustomerGlobalId = 109,
    /// A commercial agreement code was sent, but no agency is configured for the external system
    /// and no valid agency was sent in the booking, so the agreement cannot be applied.
    AgencyNotConfigured = 110,
    /// The request did not finish in time (no description in the interface).
    Timeout = 499,
    /// The mapping already exists (no description in the interface).
    MappingAlreadyExists = 1100,
    /// The car model does not exist (no description in the interface).
    ModelNotExists = 1101,
    /// The company code was not found (no description in the interface).
    CompanyCodeNotFound = 1102,
    /// Commercial agreement not supported.
    CommercialAgreementNotSupported = 1103,
    /// A commercial agreement is required (no description in the interface).
    CommercialAgreementRequired = 1104,
    /// The cited infraction notice is not recognised for the tenant.
    InfractionNoticeNotFound = 1105,
    /// The cited infraction notice is archived and cannot be linked.
    InfractionNoticeDismissed = 1106,
    /// Infraction context (car, date, booking or driver) does not match the notice.
    InfractionNoticeContextMismatch = 1107,
    /// The notice already has a main infraction linked.
    InfractionNoticeMainAlreadyLinked = 1108,
    /// The notice already has a driver-non-identification infraction linked.
    InfractionNoticeNicAlreadyLinked = 1109,
    /// The infraction is already linked to a different notice.
    InfractionNoticeInfractionAlreadyLinked = 1110,
    /// Price agreement not found.
    PriceAgreementNotFound = 1111,
}

impl ErrorCode {
    /// The integer sent in `ErrorCode` of the error body.
    pub const fn code(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i32(self.code())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = i32::deserialize(deserializer)?;
        ErrorCode::from_code(code).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Signed(code.into()),
                &"an error code of the interface",
            )
        })
    }
}

/// A business or validation error: the code sent to the client, and what it is about.
///
/// `field` names the request field or query parameter at fault (for
/// [`ErrorCode::ModelNotValid`] always). `detail` is a short technical note on what was wrong
/// (e.g. `must be an integer`); it is shown after the translated message but is not itself
/// translated. Build one with [`ApiError::new`], [`ApiError::invalid_field`],
/// [`ApiError::missing_field`] and the `with_*` methods; render it with
/// [`ApiError::message`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message(Language::En))]
pub struct ApiError {
    /// The code sent in the error body.
    pub code: ErrorCode,
    /// The request field or query parameter at fault, as the client spelled it.
    pub field: Option<String>,
    /// A short technical note on what was wrong, not translated.
    pub detail: Option<String>,
}

impl ApiError {
    /// An error with only a code.
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            field: None,
            detail: None,
        }
    }

    /// A [`ErrorCode::ModelNotValid`] (98) error naming the field and saying what is wrong.
    pub fn invalid_field(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorCode::ModelNotValid)
            .with_field(field)
            .with_detail(detail)
    }

    /// A [`ErrorCode::ModelNotValid`] (98) error for a required field that is missing.
    pub fn missing_field(field: impl Into<String>) -> Self {
        Self::invalid_field(field, "is required")
    }

    /// The same error, naming the field at fault.
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// The same error, with a technical note on what was wrong.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

impl From<ErrorCode> for ApiError {
    fn from(code: ErrorCode) -> Self {
        Self::new(code)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The rows of the table in section 7.2 of the interface: code -> name.
    fn interface_table() -> BTreeMap<i32, String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/interface.md");
        let text = std::fs::read_to_string(path).unwrap();
        let section = text
            .split("### 7.2 ErrorCode values")
            .nth(1)
            .unwrap()
            .split("\n#")
            .next()
            .unwrap();
        let mut rows = BTreeMap::new();
        for line in section.lines().filter(|line| line.starts_with('|')) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let (Some(code), Some(name)) = (cells.get(1), cells.get(2)) else {
                continue;
            };
            if let Ok(code) = code.parse::<i32>() {
                assert!(
                    rows.insert(code, (*name).to_owned()).is_none(),
                    "code {code} appears twice in the interface"
                );
            }
        }
        assert!(
            rows.len() > 80,
            "the table was not found: {} rows",
            rows.len()
        );
        rows
    }

    #[test]
    fn every_row_of_the_interface_table_is_a_variant() {
        for (code, name) in interface_table() {
            let variant = ErrorCode::from_code(code)
                .unwrap_or_else(|| panic!("code {code} ({name}) has no variant"));
            assert_eq!(variant.name(), name, "name of code {code}");
            assert_eq!(variant.code(), code);
        }
    }

    #[test]
    fn every_variant_is_a_row_of_the_interface_table() {
        let table = interface_table();
        assert_eq!(ErrorCode::ALL.len(), table.len());
        for code in ErrorCode::ALL {
            assert_eq!(
                table.get(&code.code()).map(String::as_str),
                Some(code.name()),
                "{code:?} is not in the interface's table"
            );
        }
    }

    #[test]
    fn unknown_numbers_are_no_code() {
        for number in [-1, 16, 20, 52, 97, 111, 498, 500, 1099, 1112] {
            assert_eq!(ErrorCode::from_code(number), None, "{number}");
        }
    }

    #[test]
    fn error_code_serializes_as_an_integer() {
        assert_eq!(
            serde_json::to_string(&ErrorCode::InvlaidDates).unwrap(),
            "13"
        );
        let code: ErrorCode = serde_json::from_str("1111").unwrap();
        assert_eq!(code, ErrorCode::PriceAgreementNotFound);
        assert!(serde_json::from_str::<ErrorCode>("16").is_err());
        assert!(serde_json::from_str::<ErrorCode>("\"13\"").is_err());
    }

    #[test]
    fn constructors_fill_code_field_and_detail() {
        let error = ApiError::invalid_field("limit", "must be an integer");
        assert_eq!(error.code, ErrorCode::ModelNotValid);
        assert_eq!(error.code.code(), 98);
        assert_eq!(error.field.as_deref(), Some("limit"));
        assert_eq!(error.detail.as_deref(), Some("must be an integer"));

        let missing = ApiError::missing_field("fromDate");
        assert_eq!(missing.code, ErrorCode::ModelNotValid);
        assert_eq!(missing.field.as_deref(), Some("fromDate"));

        let plain = ApiError::from(ErrorCode::BookingVersionError);
        assert_eq!(plain, ApiError::new(ErrorCode::BookingVersionError));
        assert_eq!(plain.field, None);
        assert_eq!(plain.detail, None);
    }

    #[test]
    fn display_is_the_english_message() {
        let error = ApiError::invalid_field("limit", "must be an integer");
        assert_eq!(
            error.to_string(),
            "The field 'limit' is not valid: must be an integer"
        );
    }
}
