//! Holding what a booking needs (rule 3), race-free.
//!
//! The domain decides what must be held ([`Plan`]) and whether a car or a category has room;
//! this module reads what it decides on and writes the lock documents that make the decision
//! safe under concurrency. For every car (and, category-based, every category) a booking is
//! about to hold, in the booking's read-write transaction:
//!
//! 1. read the lock documents of the car's days in the period
//!    ([`availability::lock_days`]): absent, or at some revision;
//! 2. read what the bookings of the car (or category) occupy on those days from the
//!    `car-day` (or `category-day`) index: its entries carry each booking's Id and dates, so
//!    no booking is loaded, and a check reads (and so conflicts with) only the bookings of
//!    its days;
//! 3. if there is room, write the locks back, each expecting exactly what step 1 read
//!    ([`Locks::write`]), once the request has read and priced everything else: a
//!    transaction's first write takes SQLite's writer turn, which every other writer of the
//!    file then waits for until the commit.
//!
//! Two transactions that hold the same car over overlapping periods share a day, so both
//! write its lock and they cannot both commit: the second one's write conflicts (SQLite
//! serialises writers; on PostgreSQL the second `UPDATE`/`INSERT` waits for the first to
//! commit, then finds the revision moved or the row there). [`rental_guest::retry_on_conflict`]
//! runs the loser again, and it then sees the winner's booking. Bookings of one car on other
//! days write other locks, so they do not contend.

use std::collections::{HashMap, HashSet};

use rental_domain::booking::availability::{self, Occupancy, Plan, Scope};
use rental_domain::booking::request::{Period, fields};
use rental_domain::collections::{CarLock, CategoryLock, bookings};
use rental_domain::store::KeyRange;
use rental_domain::{ApiError, Booking, Car, Category, ErrorCode, KeyPart, Stored};
use rental_guest::Error;
use rental_guest::store::{Expect, Range, Transaction};

use crate::catalog;

/// What was held.
pub enum Held {
    /// Nothing new: the booking keeps its vehicle.
    Unchanged,
    /// This car (and a place in its category's quota when the plan asked).
    Car(Box<Car>),
    /// A place in the category's quota, with no car.
    Quota,
}

/// The lock documents a hold writes, each expecting what was read when the hold decided.
#[derive(Default)]
#[must_use = "nothing is held until the locks are written"]
pub struct Locks {
    categories: Vec<(CategoryLock, Expect)>,
    cars: Vec<(CarLock, Expect)>,
}

impl Locks {
    /// Writes the locks: the hold is safe once the transaction commits.
    pub fn write(self, tx: &Transaction) -> Result<(), Error> {
        for (lock, expect) in self.categories {
            tx.put(&lock, expect)?;
        }
        for (lock, expect) in self.cars {
            tx.put(&lock, expect)?;
        }
        Ok(())
    }
}

/// Decides what `plan` asks for the booking `booking_id` (`None` for a new one) over
/// `period`, and the locks that hold it, to be written before the commit; `unavailable` is
/// the error when there is no room (3 CarNotAvailable, or 26 for a reactivation).
pub fn hold(
    tx: &Transaction,
    plan: &Plan,
    period: Period,
    booking_id: Option<i64>,
    unavailable: ErrorCode,
) -> Result<(Held, Locks), Error> {
    let slot = Slot {
        tx,
        period,
        booking_id,
        unavailable,
    };
    let mut locks = Locks::default();
    let held = decide(&slot, plan, &mut locks)?;
    Ok((held, locks))
}

/// What `plan` holds through `slot`, with the locks that hold it added to `locks`.
fn decide(slot: &Slot<'_>, plan: &Plan, locks: &mut Locks) -> Result<Held, Error> {
    let (tx, period, unavailable) = (slot.tx, slot.period, slot.unavailable);
    match plan {
        Plan::Keep => Ok(Held::Unchanged),
        Plan::Car { car, quota } => {
            if let Some(category) = quota {
                slot.quota(*category, locks)?;
            }
            let car = catalog::get::<Car>(tx, car)?
                .ok_or_else(|| ApiError::new(ErrorCode::CarNotFound).with_field(fields::CAR_ID))?;
            if availability::in_service(&car, period) && slot.car(&car.id, locks)? {
                Ok(Held::Car(Box::new(car)))
            } else {
                Err(ApiError::new(unavailable).into())
            }
        }
        Plan::FreeCar { scope, keep } => {
            let (cars, principal) = match *scope {
                Scope::Model(model) => (catalog::slots_of(tx, model)?, None),
                Scope::Category(category) => {
                    let mut cars = Vec::new();
                    for model in catalog::model_ids_of(tx, category)? {
                        cars.extend(catalog::slots_of(tx, model)?);
                    }
                    let principal = catalog::get::<Category>(tx, &category.to_string())?
                        .and_then(|category| category.principal_model_id);
                    (cars, principal)
                }
            };
            for candidate in availability::candidates(cars, keep.as_deref(), principal, period) {
                if slot.car(&candidate.id, locks)? {
                    // Read in the snapshot its slot was read in, where a car's slot is there
                    // exactly when the car is.
                    let car = catalog::get::<Car>(tx, &candidate.id)?.ok_or_else(|| {
                        Error::internal(format!("car {} has a slot and no document", candidate.id))
                    })?;
                    return Ok(Held::Car(Box::new(car)));
                }
            }
            Err(ApiError::new(unavailable).into())
        }
        Plan::Quota(category) => {
            slot.quota(*category, locks)?;
            Ok(Held::Quota)
        }
    }
}

/// One booking's attempt to hold capacity.
struct Slot<'a> {
    tx: &'a Transaction,
    period: Period,
    booking_id: Option<i64>,
    unavailable: ErrorCode,
}

impl Slot<'_> {
    /// Whether the car `car_id` is free, adding the locks of its days to `to_write` when it
    /// is.
    fn car(&self, car_id: &str, to_write: &mut Locks) -> Result<bool, Error> {
        let locks: Vec<CarLock> = availability::lock_days(self.period)
            .map(|day| CarLock {
                car_id: car_id.to_owned(),
                day,
            })
            .collect();
        let expected = self.read_locks(&locks)?;
        let occupied = self.occupied(bookings::car_ranges(car_id, self.period))?;
        if !availability::car_is_free(&occupied, self.period, self.booking_id) {
            return Ok(false);
        }
        to_write.cars.extend(locks.into_iter().zip(expected));
        Ok(true)
    }

    /// A place in `category`'s quota, whose days' locks are added to `to_write`;
    /// `unavailable` when it is full.
    fn quota(&self, category: i64, to_write: &mut Locks) -> Result<(), Error> {
        let locks: Vec<CategoryLock> = availability::lock_days(self.period)
            .map(|day| CategoryLock {
                category_id: category,
                day,
            })
            .collect();
        let expected = self.read_locks(&locks)?;
        let occupied = self.occupied(bookings::category_ranges(category, self.period))?;
        let mut capacity = 0;
        for model in catalog::model_ids_of(self.tx, category)? {
            capacity += catalog::slots_of(self.tx, model)?
                .iter()
                .filter(|car| availability::in_fleet(car.inactive_date, self.period))
                .count();
        }
        if !availability::has_room(&occupied, self.period, self.booking_id, capacity) {
            return Err(ApiError::new(self.unavailable).into());
        }
        to_write.categories.extend(locks.into_iter().zip(expected));
        Ok(())
    }

    /// What writing each of `locks` back must expect: what is there now.
    fn read_locks<T: Stored>(&self, locks: &[T]) -> Result<Vec<Expect>, Error> {
        let ids: Vec<String> = locks.iter().map(Stored::id).collect();
        let found: HashMap<String, u64> = self
            .tx
            .get_many::<T>(&ids)?
            .into_iter()
            .map(|document| (document.id, document.revision))
            .collect();
        Ok(ids
            .iter()
            .map(|id| {
                found
                    .get(id)
                    .map_or(Expect::Absent, |&revision| Expect::Revision(revision))
            })
            .collect())
    }

    /// What the bookings found in `ranges` (of [`bookings::car_ranges`] or
    /// [`bookings::category_ranges`]) occupy, each booking once. Only bookings not written
    /// since the day indexes came have entries in the second range, and writes only take
    /// entries out of it, so it changes only when such a booking is written again.
    fn occupied(&self, ranges: [(&'static str, KeyRange); 2]) -> Result<Vec<Occupancy>, Error> {
        let mut seen = HashSet::new();
        let mut occupied = Vec::new();
        for (index, keys) in ranges {
            for (_, occupancy) in occupied_by(self.tx, &Range::new(index, keys))? {
                if seen.insert(occupancy.booking_id) {
                    occupied.push(occupancy);
                }
            }
        }
        Ok(occupied)
    }
}

/// What the bookings of an availability range (of an index of cars or categories) occupy, each
/// with the first part of its entry's key (the car's or the category's Id), from the entries;
/// only a booking whose entry was written before entries carried its period is loaded.
pub fn occupied_by(
    tx: &Transaction,
    range: &Range<Booking>,
) -> Result<Vec<(KeyPart, Occupancy)>, Error> {
    let mut occupied = Vec::new();
    let mut unread = HashMap::new();
    // Their keys end with the booking's Id: distinct.
    for mut entry in tx.all_distinct_keys(range)? {
        let Some(holder) = entry.key.first().cloned() else {
            continue;
        };
        match bookings::occupancy(&entry.key) {
            Some(occupancy) => occupied.push((holder, occupancy)),
            None => {
                unread.insert(std::mem::take(&mut entry.id), holder);
            }
        }
    }
    let ids: Vec<String> = unread.keys().cloned().collect();
    for document in tx.get_many::<Booking>(&ids)? {
        if let (Some(holder), Some(occupancy)) =
            (unread.remove(&document.id), Occupancy::of(&document.value))
        {
            occupied.push((holder, occupancy));
        }
    }
    Ok(occupied)
}
