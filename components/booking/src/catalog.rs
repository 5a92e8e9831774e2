//! Reading the tenant's catalogue and customers for the booking rules.

use std::collections::HashMap;

use rental_domain::booking::availability::VehicleRequest;
use rental_domain::booking::customer::{self, CustomerLookup};
use rental_domain::booking::request::{BookingRequest, fields};
use rental_domain::booking::terms::{self, PriceLists, Rules, Terms, Vehicle};
use rental_domain::collections::{
    CAR_SLOTS, CarSlot, additionals, branch_offices, car_models, cars, customers, tariffs,
};
use rental_domain::pricing::Quote;
use rental_domain::{
    Additional, ApiError, Booking, Bound, BranchOfficeDoc, Car, Category, CustomerDoc, ErrorCode,
    KeyPart, KeyRange, Model, Stored, Tariff,
};
use rental_guest::Error;
use rental_guest::store::{DEFAULT_SCAN_LIMIT, Document, Range, Transaction};

/// Every branch office, active or not, with its places.
pub fn offices(tx: &Transaction) -> Result<Vec<BranchOfficeDoc>, Error> {
    Ok(values(tx.scan_all(&Range::all(branch_offices::BY_ID))?))
}

/// Every additional of the catalogue.
pub fn additionals(tx: &Transaction) -> Result<Vec<Additional>, Error> {
    Ok(values(tx.scan_all(&Range::all(additionals::BY_ID))?))
}

/// The tariffs of a category, its models' included.
pub fn tariffs(tx: &Transaction, category_id: i64) -> Result<Vec<Tariff>, Error> {
    Ok(values(tx.scan_all(&Range::prefix(
        tariffs::BY_CATEGORY,
        vec![KeyPart::Int(category_id)],
    ))?))
}

/// The catalogue's price lists, each read once however many vehicles are priced: the
/// additionals, and a category's tariffs when a vehicle of it is first priced.
pub struct PriceBook<'t> {
    tx: &'t Transaction,
    additionals: Option<Vec<Additional>>,
    tariffs: HashMap<i64, Vec<Tariff>>,
}

impl<'t> PriceBook<'t> {
    pub fn new(tx: &'t Transaction) -> Self {
        Self {
            tx,
            additionals: None,
            tariffs: HashMap::new(),
        }
    }

    /// Prices `vehicle` for `terms` with the `requested` additionals, against the catalogue's
    /// additionals and the tariffs of the vehicle's category, with the tenant's `custom`
    /// adjustments; the price the client sent is checked by the rules.
    pub fn price(
        &mut self,
        terms: &Terms<'_>,
        vehicle: &Vehicle,
        requested: &[rental_domain::BookingAdditional],
        body: &BookingRequest,
        rules: &Rules<'_>,
        custom: &dyn crate::Rules,
    ) -> Result<Quote, Error> {
        if self.additionals.is_none() {
            self.additionals = Some(additionals(self.tx)?);
        }
        let category = vehicle.category.id;
        if !self.tariffs.contains_key(&category) {
            self.tariffs.insert(category, tariffs(self.tx, category)?);
        }
        Ok(terms::price(
            terms,
            vehicle,
            requested,
            PriceLists {
                additionals: self.additionals.as_deref().unwrap_or_default(),
                tariffs: self.tariffs.get(&category).map_or(&[], Vec::as_slice),
            },
            body.price,
            rules,
            |quote| custom.price_adjustments(quote, terms, vehicle),
        )?)
    }
}

/// The Ids of the models of a category, from the index alone: what a category's cars are
/// found by.
pub fn model_ids_of(tx: &Transaction, category_id: i64) -> Result<Vec<i64>, Error> {
    let range = Range::<Model>::prefix(car_models::BY_CATEGORY, vec![KeyPart::Int(category_id)]);
    tx.all_distinct_keys(&range)?
        .into_iter()
        .map(|entry| match entry.key.as_slice() {
            [_, KeyPart::Int(model)] => Ok(*model),
            key => Err(Error::internal(format!(
                "model {}'s category entry {key:?} names no model Id",
                entry.id
            ))),
        })
        .collect()
}

/// The slots ([`CAR_SLOTS`]) of the cars whose key in the cars' index `index` starts with
/// `prefix`, in key order: a few bytes a car, where its document is a kilobyte. The keys of
/// both indexes of cars end with the car's Id, so each page asks from after the last slot
/// read, and the host reads each entry once (a skip would step over every slot read before,
/// again).
pub fn car_slots(
    tx: &Transaction,
    index: &'static str,
    prefix: &[KeyPart],
) -> Result<Vec<CarSlot>, Error> {
    let whole = KeyRange::prefix(prefix.to_vec());
    let mut slots: Vec<CarSlot> = Vec::new();
    loop {
        let lower = match slots.last() {
            Some(slot) => {
                let mut key = prefix.to_vec();
                key.push(KeyPart::Text(slot.id.clone()));
                Some(Bound::Exclusive(key))
            }
            None => whole.lower.clone(),
        };
        let range = Range::<Car>::new(
            index,
            KeyRange {
                lower,
                upper: whole.upper.clone(),
            },
        );
        let page = tx.scan_view(&CAR_SLOTS, &range.scan().limit(DEFAULT_SCAN_LIMIT))?;
        if page.is_empty() {
            return Ok(slots);
        }
        for rendered in page {
            slots.push(serde_json::from_str(&rendered.body).map_err(|e| {
                Error::internal(format!(
                    "the slot of car {} does not read: {e}",
                    rendered.id
                ))
            })?);
        }
    }
}

/// The slots of the cars of a model ([`car_slots`]).
pub fn slots_of(tx: &Transaction, model_id: i64) -> Result<Vec<CarSlot>, Error> {
    car_slots(tx, cars::BY_MODEL, &[KeyPart::Int(model_id)])
}

/// The vehicle `request` names, as the catalogue has it (a model or category the catalogue
/// lacks is 2 CarNotFound naming the field), or for [`VehicleRequest::Same`] what `stored`
/// has. A named model or category holds no car yet: availability gives it one, or none.
pub fn vehicle(
    tx: &Transaction,
    request: &VehicleRequest,
    stored: Option<&Booking>,
) -> Result<Vehicle, Error> {
    let not_found = |field: &str| ApiError::new(ErrorCode::CarNotFound).with_field(field);
    match request {
        VehicleRequest::Car(id) => {
            let car = get::<Car>(tx, id)?.ok_or_else(|| not_found(fields::CAR_ID))?;
            let model =
                get::<Model>(tx, &car.model.id.to_string())?.unwrap_or_else(|| car.model.clone());
            let category = category_of(tx, &model, fields::CAR_ID)?;
            Ok(Vehicle {
                car: Some(car),
                model: Some(model),
                category,
            })
        }
        VehicleRequest::Model(id) => {
            let model = get::<Model>(tx, &id.to_string())?
                .ok_or_else(|| not_found(fields::CAR_MODEL_ID))?;
            let category = category_of(tx, &model, fields::CAR_MODEL_ID)?;
            Ok(Vehicle {
                car: None,
                model: Some(model),
                category,
            })
        }
        VehicleRequest::Category(id) => Ok(Vehicle {
            car: None,
            model: None,
            category: get::<Category>(tx, &id.to_string())?
                .ok_or_else(|| not_found(fields::CATEGORY_ID))?,
        }),
        VehicleRequest::Same => {
            let stored = stored.ok_or_else(|| ApiError::missing_field(fields::CATEGORY_ID))?;
            Ok(Vehicle {
                car: stored.car.clone(),
                model: stored.model.clone(),
                category: stored.category.clone(),
            })
        }
    }
}

/// The category of `model`, as the catalogue has it.
fn category_of(tx: &Transaction, model: &Model, field: &str) -> Result<Category, Error> {
    let id = model
        .category
        .as_ref()
        .map(|category| category.id)
        .ok_or_else(|| ApiError::new(ErrorCode::CarNotFound).with_field(field))?;
    Ok(get::<Category>(tx, &id.to_string())?
        .ok_or_else(|| ApiError::new(ErrorCode::CarNotFound).with_field(field))?)
}

/// The existing customer `lookup` names: 1 CustomerNotFound when there is none, 109
/// DuplicateCustomerGlobalId when a `GlobalId` names several. `None` for a new customer.
pub fn existing_customer(
    tx: &Transaction,
    lookup: &CustomerLookup,
) -> Result<Option<Document<CustomerDoc>>, Error> {
    match lookup {
        CustomerLookup::ById(id) => Ok(Some(tx.get::<CustomerDoc>(&id.to_string())?.ok_or_else(
            || ApiError::new(ErrorCode::CustomerNotFound).with_field("Customer.Id"),
        )?)),
        CustomerLookup::ByGlobalId(global_id) => {
            let found = tx.scan(
                &Range::prefix(
                    customers::BY_GLOBAL_ID,
                    vec![KeyPart::from(global_id.as_str())],
                )
                .scan()
                .limit(2),
            )?;
            Ok(Some(customer::single_by_global_id(found)?))
        }
        CustomerLookup::New => Ok(None),
    }
}

/// A customer by Id, when there is one.
pub fn customer(tx: &Transaction, id: i64) -> Result<Option<Document<CustomerDoc>>, Error> {
    Ok(tx.get::<CustomerDoc>(&id.to_string())?)
}

/// A stored value by id, when there is one.
pub fn get<T: Stored>(tx: &Transaction, id: &str) -> Result<Option<T>, Error> {
    Ok(tx.get::<T>(id)?.map(|document| document.value))
}

/// The values of documents.
fn values<T>(documents: Vec<Document<T>>) -> Vec<T> {
    documents
        .into_iter()
        .map(|document| document.value)
        .collect()
}
