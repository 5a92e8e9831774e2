//! Where each stored document lives: collection names, document ids and index entries.
//!
//! Components and the host code against the names in the submodules; the [`Stored`] impls
//! below are the only place that computes ids and index keys. Integer ids are stored as their
//! decimal string. An index that exists only for some documents (e.g. `updated`, `closed`)
//! doubles as a filter: a document without the entry is never listed through it.

use chrono::{DateTime, FixedOffset, Utc};
use serde::{Deserialize, Serialize};

use crate::booking::availability::{Occupancy, lock_days};
use crate::booking::request::Period;
use crate::models::{
    Additional, Booking, BookingComment, BookingDescription, BranchOffice, Car, Category, Customer,
    Model, Tariff,
};
use crate::payments::PaymentRecord;
use crate::status::BookingStatus;
use crate::store::{Bound, Counted, IndexKey, KeyPart, KeyRange, Stored, View};

/// Bookings ([`Booking`]), id = `Id`.
pub mod bookings {
    use super::*;

    pub const COLLECTION: &str = "bookings";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Int(CurrentStatus), Int(Id)]`.
    pub const BY_STATUS: &str = "status";
    /// `[Time(UpdatedOn), Int(CurrentStatus), Int(Id)]`, only when `UpdatedOn` is set: legacy
    /// bookings are absent from `updatedSince` lists.
    pub const BY_UPDATED: &str = "updated";
    /// `[Time(CurrentStatusDate), Int(Id)]`, only for Closed bookings (the close date).
    pub const BY_CLOSED: &str = "closed";
    /// `[Text(Code)]`, only when `Code` is set.
    pub const BY_CODE: &str = "code";
    /// `[Text(Car.Id), Time(ToDate), Time(FromDate), Int(Id)]`, only for bookings that hold
    /// capacity ([`BookingStatus::holds_capacity`]) and have a car: what a car is booked for,
    /// one entry per booking, for a search over a whole fleet.
    pub const BY_CAR_PERIOD: &str = "car-period";
    /// `[Int(Category.Id), Time(ToDate), Time(FromDate), Int(Id)]`, only for bookings that hold
    /// capacity: what a category's quota is used by.
    pub const BY_CATEGORY_PERIOD: &str = "category-period";
    /// `[Text(Car.Id), Int(day), Time(ToDate), Time(FromDate), Int(Id)]`, the entries of
    /// [`BY_CAR_PERIOD`] once per day of the booking's period ([`lock_days`]), so that a check
    /// of a period reads the entries of its own days and nothing else ([`car_ranges`]).
    pub const BY_CAR_DAY: &str = "car-day";
    /// The entries of [`BY_CATEGORY_PERIOD`] once per day, as [`BY_CAR_DAY`].
    pub const BY_CATEGORY_DAY: &str = "category-day";
    /// What bookings stored before [`BY_CAR_PERIOD`] and [`BY_CAR_DAY`] existed hold, until
    /// they are written again: `[Text(Car.Id), Time(ToDate), Time(FromDate), Int(Id)]`, or,
    /// written earlier still, `[Text(Car.Id), Time(ToDate), Int(Id)]` ([`occupancy`]).
    /// Nothing adds entries to it.
    pub const BY_CAR: &str = "car";
    /// As [`BY_CAR`], for the category indexes. Nothing adds entries to it.
    pub const BY_CATEGORY: &str = "category";

    /// The part of the [`BY_UPDATED`] index updated strictly after `since`.
    pub fn updated_after(since: DateTime<Utc>) -> KeyRange {
        KeyRange {
            lower: Some(Bound::Exclusive(vec![KeyPart::from(since)])),
            upper: None,
        }
    }

    /// What a check of the car `car_id` over `period` reads, as `(index, range)`: the car's
    /// entries of [`BY_CAR_DAY`] on the period's days (every booking of the car that shares an
    /// instant with the period, as many times as they share days), and its entries of
    /// [`BY_CAR`] ending strictly after the period's start (the bookings stored before the day
    /// index that may overlap it).
    pub fn car_ranges(car_id: &str, period: Period) -> [(&'static str, KeyRange); 2] {
        ranges([BY_CAR_DAY, BY_CAR], KeyPart::from(car_id), period)
    }

    /// What a check of the category `category_id`'s quota over `period` reads, as
    /// [`car_ranges`] for a car.
    pub fn category_ranges(category_id: i64, period: Period) -> [(&'static str, KeyRange); 2] {
        ranges(
            [BY_CATEGORY_DAY, BY_CATEGORY],
            KeyPart::Int(category_id),
            period,
        )
    }

    /// What an entry `key` of an availability index (those of cars and categories above) says
    /// of its booking: its Id and its period, so that an availability check decides on the
    /// entries alone, however many bookings it finds. `None` for an entry written before keys
    /// carried `FromDate`: its booking must be read ([`Occupancy::of`]). Times are the
    /// store's, to the microsecond.
    pub fn occupancy(key: &[KeyPart]) -> Option<Occupancy> {
        let instant = |micros: i64| {
            DateTime::from_timestamp_micros(micros).map(|instant| instant.fixed_offset())
        };
        match key {
            [
                _,
                KeyPart::Int(_),
                KeyPart::Time(to),
                KeyPart::Time(from),
                KeyPart::Int(id),
            ]
            | [_, KeyPart::Time(to), KeyPart::Time(from), KeyPart::Int(id)] => Some(Occupancy {
                booking_id: *id,
                period: Period {
                    from: instant(*from)?,
                    to: instant(*to)?,
                },
            }),
            _ => None,
        }
    }

    /// The entries of `owner` in `day_index` (keys `[owner, Int(day), ...]`) on the days of
    /// `period`, and in `earlier_index` (keys `[owner, Time(ToDate), ...]`) ending strictly
    /// after its start.
    fn ranges(
        [day_index, earlier_index]: [&'static str; 2],
        owner: KeyPart,
        period: Period,
    ) -> [(&'static str, KeyRange); 2] {
        let days = lock_days(period);
        let on_days = KeyRange {
            lower: Some(Bound::Inclusive(vec![
                owner.clone(),
                KeyPart::Int(*days.start()),
            ])),
            upper: Some(Bound::Inclusive(vec![
                owner.clone(),
                KeyPart::Int(*days.end()),
            ])),
        };
        let ending_after = KeyRange {
            lower: Some(Bound::Exclusive(vec![
                owner.clone(),
                KeyPart::from(period.from),
            ])),
            upper: Some(Bound::Inclusive(vec![owner])),
        };
        [(day_index, on_days), (earlier_index, ending_after)]
    }
}

/// Bookings in list form ([`BookingDescription`], the items of `GET /api/bookings/list`), id =
/// `Id`: a [`View`] of [`bookings`], rendered by the store on every write of a booking
/// ([`VIEWS`]). Ranges name the indexes of [`bookings`]. Its change feed is what
/// `GET /api/bookings/changes` pages through.
pub mod booking_items {
    pub const COLLECTION: &str = "booking-items";
}

/// Cars in the few fields availability decides on ([`CarSlot`]), id = the car's `Id`: a
/// [`View`] of [`cars`] ([`CAR_SLOTS`]), so that a search over a whole fleet reads a few bytes
/// a car instead of its document. Ranges name the indexes of [`cars`].
pub mod car_slots {
    pub const COLLECTION: &str = "car-slots";
}

/// Locks on a car's calendar ([`CarLock`]), one per car and day, id = `<car id>/<day>`. Every
/// transaction that makes a booking hold a car writes the locks of the car's days it holds
/// with compare-and-swap, so that two that hold one car on one day cannot both commit, while
/// bookings of other days do not contend (docs/booking.md, "Availability").
pub mod car_locks {
    pub const COLLECTION: &str = "car-locks";
}

/// Locks on a category's quota ([`CategoryLock`]), one per category and day, id =
/// `<category id>/<day>`; as [`car_locks`] for the category-based availability.
pub mod category_locks {
    pub const COLLECTION: &str = "category-locks";
}

/// Customers ([`CustomerDoc`]), id = `Customer.Id`.
pub mod customers {
    pub const COLLECTION: &str = "customers";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Text(GlobalId)]`, only when `GlobalId` is set.
    pub const BY_GLOBAL_ID: &str = "global-id";
}

/// Cars ([`Car`]), id = `Id` (already a string).
pub mod cars {
    pub const COLLECTION: &str = "cars";
    /// `[Text(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Int(Model.Id), Text(Id)]`.
    pub const BY_MODEL: &str = "model";
}

/// Branch offices ([`BranchOfficeDoc`]), id = `Office.Id`.
pub mod branch_offices {
    pub const COLLECTION: &str = "branch-offices";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Int(Id)]`, only for active offices: what `GET /api/branchoffices` lists.
    pub const ACTIVE: &str = "active";
}

/// Car categories ([`Category`]), id = `Id`.
pub mod categories {
    pub const COLLECTION: &str = "categories";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
}

/// Car models ([`Model`]), id = `Id`.
pub mod car_models {
    pub const COLLECTION: &str = "models";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Int(Category.Id), Int(Id)]`, only when the model has a category.
    pub const BY_CATEGORY: &str = "category";
}

/// Additionals of the catalogue ([`Additional`]), id = `Id`.
pub mod additionals {
    pub const COLLECTION: &str = "additionals";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
}

/// Tariffs ([`Tariff`]), id = `Id`.
pub mod tariffs {
    pub const COLLECTION: &str = "tariffs";
    /// `[Int(Id)]`.
    pub const BY_ID: &str = "id";
    /// `[Int(CategoryId), Int(Id)]`.
    pub const BY_CATEGORY: &str = "category";
}

/// Comments recorded on bookings ([`BookingComment`]), id = `{BookingId}-{Seq}`.
pub mod booking_comments {
    pub const COLLECTION: &str = "booking-comments";
    /// `[Int(BookingId), Int(Seq)]`: a booking's comments, oldest first.
    pub const BY_BOOKING: &str = "booking";

    /// The document id of a booking's comment number `seq`.
    pub fn id(booking_id: i64, seq: i64) -> String {
        format!("{booking_id}-{seq}")
    }
}

/// Payments credited on bookings ([`PaymentRecord`]), id = [`PaymentRecord::id_of`] (bank and
/// external id): writing it with `Expect::Absent` in the crediting transaction makes a payment
/// count once.
pub mod payments {
    pub const COLLECTION: &str = "payments";
    /// `[Int(BookingId), Text(id)]`: a booking's payments.
    pub const BY_BOOKING: &str = "booking";
}

/// The indexes the store keeps counted ([`Counted`]): what the lists count for their
/// `Total` (every booking, the bookings of one status, customers and cars), so that a count
/// costs the same at a million bookings as at a hundred. Migration `0003_index_counts` fills
/// these counts for the entries stored before it.
pub const COUNTED: &[Counted] = &[
    Counted {
        collection: bookings::COLLECTION,
        index: bookings::BY_ID,
        depth: 0,
    },
    Counted {
        collection: bookings::COLLECTION,
        index: bookings::BY_STATUS,
        depth: 1,
    },
    Counted {
        collection: customers::COLLECTION,
        index: customers::BY_ID,
        depth: 0,
    },
    Counted {
        collection: cars::COLLECTION,
        index: cars::BY_ID,
        depth: 0,
    },
];

/// The count kept for `index` of `collection` by prefixes of `depth` parts, if there is one.
pub fn counted(collection: &str, index: &str, depth: usize) -> Option<&'static Counted> {
    COUNTED
        .iter()
        .find(|c| c.collection == collection && c.index == index && c.depth == depth)
}

/// The bookings in list form ([`booking_items`]).
pub const BOOKING_ITEMS: View = View {
    source: bookings::COLLECTION,
    collection: booking_items::COLLECTION,
    render: render_booking_item,
    feed: true,
};

/// The cars in the fields availability decides on ([`car_slots`]).
pub const CAR_SLOTS: View = View {
    source: cars::COLLECTION,
    collection: car_slots::COLLECTION,
    render: render_car_slot,
    feed: false,
};

/// The collections the store renders from others ([`View`]).
pub const VIEWS: &[View] = &[BOOKING_ITEMS, CAR_SLOTS];

/// The view whose documents live in `collection`, if it is one.
pub fn view(collection: &str) -> Option<&'static View> {
    VIEWS.iter().find(|view| view.collection == collection)
}

/// The views rendered from documents of `collection`.
pub fn views_of(collection: &str) -> impl Iterator<Item = &'static View> {
    VIEWS.iter().filter(move |view| view.source == collection)
}

/// A stored booking as its list item ([`booking_items`]).
fn render_booking_item(booking: &str) -> Result<String, serde_json::Error> {
    let booking: Booking = serde_json::from_str(booking)?;
    serde_json::to_string(&BookingDescription::from(&booking))
}

/// A stored car as its slot ([`car_slots`]).
fn render_car_slot(car: &str) -> Result<String, serde_json::Error> {
    let car: Car = serde_json::from_str(car)?;
    serde_json::to_string(&CarSlot::of(&car))
}

/// What availability decides on of a car: which model it is of and until when it is in the
/// fleet ([`crate::booking::availability::in_service`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CarSlot {
    pub id: String,
    pub model_id: i64,
    #[serde(with = "crate::json::option_date_time")]
    pub inactive_date: Option<DateTime<FixedOffset>>,
}

impl CarSlot {
    pub fn of(car: &Car) -> Self {
        Self {
            id: car.id.clone(),
            model_id: car.model.id,
            inactive_date: car.inactive_date,
        }
    }
}

/// A stored customer: the customer and the API user who created it, which decides whether an
/// update may change its name and e-mail (interface.md 4.5 rule 6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CustomerDoc {
    pub customer: Customer,
    /// `null` for customers not created through the API (catalogue import, demo data).
    #[serde(default)]
    pub created_by_user_id: Option<i64>,
}

/// The lock document of one day of a car's calendar: its content does not matter, its
/// revision does. Read it before looking for overlapping bookings, write it back expecting the
/// revision read ([`car_locks`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CarLock {
    pub car_id: String,
    /// Days since the Unix epoch, UTC ([`crate::booking::availability::lock_days`]).
    pub day: i64,
}

/// The lock document of one day of a category's quota ([`category_locks`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CategoryLock {
    pub category_id: i64,
    /// Days since the Unix epoch, UTC.
    pub day: i64,
}

/// A stored branch office: the office as listed, and whether it is active (only active
/// offices are listed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BranchOfficeDoc {
    pub office: BranchOffice,
    #[serde(default)]
    pub active: bool,
}

impl Stored for Booking {
    const COLLECTION: &'static str = bookings::COLLECTION;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let id = KeyPart::Int(self.id);
        let status = KeyPart::Int(self.current_status.code().into());
        let mut indexes = vec![
            IndexKey::new(bookings::BY_ID, [id.clone()]),
            IndexKey::new(bookings::BY_STATUS, [status.clone(), id.clone()]),
        ];
        if let Some(updated_on) = self.updated_on {
            indexes.push(IndexKey::new(
                bookings::BY_UPDATED,
                [KeyPart::from(updated_on), status, id.clone()],
            ));
        }
        if self.current_status == BookingStatus::Closed {
            indexes.push(IndexKey::new(
                bookings::BY_CLOSED,
                [KeyPart::from(self.current_status_date), id.clone()],
            ));
        }
        if let Some(code) = &self.code {
            indexes.push(IndexKey::new(
                bookings::BY_CODE,
                [KeyPart::Text(code.clone())],
            ));
        }
        if self.current_status.holds_capacity() {
            let (to_date, from_date) = (KeyPart::from(self.to_date), KeyPart::from(self.from_date));
            let period = Period {
                from: self.from_date,
                to: self.to_date,
            };
            let mut held_by = |[period_index, day_index]: [&'static str; 2], owner: KeyPart| {
                let entry = |day: Option<i64>| {
                    let day = day.map(KeyPart::Int);
                    let parts = [owner.clone()].into_iter().chain(day);
                    parts.chain([to_date.clone(), from_date.clone(), id.clone()])
                };
                indexes.push(IndexKey::new(period_index, entry(None)));
                for day in lock_days(period) {
                    indexes.push(IndexKey::new(day_index, entry(Some(day))));
                }
            };
            if let Some(car) = &self.car {
                let car_indexes = [bookings::BY_CAR_PERIOD, bookings::BY_CAR_DAY];
                held_by(car_indexes, KeyPart::from(car.id.as_str()));
            }
            let category_indexes = [bookings::BY_CATEGORY_PERIOD, bookings::BY_CATEGORY_DAY];
            held_by(category_indexes, KeyPart::Int(self.category.id));
        }
        indexes
    }
}

impl Stored for CarLock {
    const COLLECTION: &'static str = car_locks::COLLECTION;

    fn id(&self) -> String {
        format!("{}/{}", self.car_id, self.day)
    }

    fn indexes(&self) -> Vec<IndexKey> {
        Vec::new()
    }
}

impl Stored for CategoryLock {
    const COLLECTION: &'static str = category_locks::COLLECTION;

    fn id(&self) -> String {
        format!("{}/{}", self.category_id, self.day)
    }

    fn indexes(&self) -> Vec<IndexKey> {
        Vec::new()
    }
}

impl Stored for PaymentRecord {
    const COLLECTION: &'static str = payments::COLLECTION;

    fn id(&self) -> String {
        PaymentRecord::id_of(&self.bank, &self.external_id)
    }

    fn indexes(&self) -> Vec<IndexKey> {
        vec![IndexKey::new(
            payments::BY_BOOKING,
            [KeyPart::Int(self.booking_id), KeyPart::Text(self.id())],
        )]
    }
}

impl Stored for CustomerDoc {
    const COLLECTION: &'static str = customers::COLLECTION;

    fn id(&self) -> String {
        self.customer.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let mut indexes = vec![IndexKey::new(
            customers::BY_ID,
            [KeyPart::Int(self.customer.id)],
        )];
        if let Some(global_id) = &self.customer.global_id {
            indexes.push(IndexKey::new(
                customers::BY_GLOBAL_ID,
                [KeyPart::Text(global_id.clone())],
            ));
        }
        indexes
    }
}

impl Stored for Car {
    const COLLECTION: &'static str = cars::COLLECTION;

    fn id(&self) -> String {
        self.id.clone()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let id = KeyPart::Text(self.id.clone());
        vec![
            IndexKey::new(cars::BY_ID, [id.clone()]),
            IndexKey::new(cars::BY_MODEL, [KeyPart::Int(self.model.id), id]),
        ]
    }
}

impl Stored for BranchOfficeDoc {
    const COLLECTION: &'static str = branch_offices::COLLECTION;

    fn id(&self) -> String {
        self.office.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let id = KeyPart::Int(self.office.id);
        let mut indexes = vec![IndexKey::new(branch_offices::BY_ID, [id.clone()])];
        if self.active {
            indexes.push(IndexKey::new(branch_offices::ACTIVE, [id]));
        }
        indexes
    }
}

impl Stored for Category {
    const COLLECTION: &'static str = categories::COLLECTION;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        vec![IndexKey::new(categories::BY_ID, [KeyPart::Int(self.id)])]
    }
}

impl Stored for Model {
    const COLLECTION: &'static str = car_models::COLLECTION;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let id = KeyPart::Int(self.id);
        let mut indexes = vec![IndexKey::new(car_models::BY_ID, [id.clone()])];
        if let Some(category) = &self.category {
            indexes.push(IndexKey::new(
                car_models::BY_CATEGORY,
                [KeyPart::Int(category.id), id],
            ));
        }
        indexes
    }
}

impl Stored for Additional {
    const COLLECTION: &'static str = additionals::COLLECTION;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        vec![IndexKey::new(additionals::BY_ID, [KeyPart::Int(self.id)])]
    }
}

impl Stored for Tariff {
    const COLLECTION: &'static str = tariffs::COLLECTION;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn indexes(&self) -> Vec<IndexKey> {
        let id = KeyPart::Int(self.id);
        vec![
            IndexKey::new(tariffs::BY_ID, [id.clone()]),
            IndexKey::new(tariffs::BY_CATEGORY, [KeyPart::Int(self.category_id), id]),
        ]
    }
}

impl Stored for BookingComment {
    const COLLECTION: &'static str = booking_comments::COLLECTION;

    fn id(&self) -> String {
        booking_comments::id(self.booking_id, self.seq)
    }

    fn indexes(&self) -> Vec<IndexKey> {
        vec![IndexKey::new(
            booking_comments::BY_BOOKING,
            [KeyPart::Int(self.booking_id), KeyPart::Int(self.seq)],
        )]
    }
}

#[cfg(test)]
mod tests;
