//! The comments recorded on a booking (interface.md 4.5 rule 2): its main changes, naming who
//! changed what from and to, and the status changes and refusals worth an audit line.
//!
//! Texts are English, whatever the response language: they are an audit record, read by
//! support, not a message to the client.

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

use crate::models::{Booking, Place};
use crate::status::BookingStatus;

/// One change of a main field: its name and its value before and after, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub field: &'static str,
    pub from: String,
    pub to: String,
}

impl Change {
    /// The comment text: `<user> changed <field> from <from> to <to>`.
    pub fn text(&self, user: &str) -> String {
        format!(
            "{user} changed {} from {} to {}",
            self.field, self.from, self.to
        )
    }
}

/// The main changes from `old` to `new`: dates, places, car, model, category, distance,
/// transportation ids, agency, commercial agreement, price (and status), in that order.
pub fn main_changes(old: &Booking, new: &Booking) -> Vec<Change> {
    let date = |value: &DateTime<FixedOffset>| value.to_rfc3339();
    let place = |place: &Place| {
        let mut text = format!("{} ({})", place.name, place.id);
        if place.is_custom_address {
            text.push_str(&format!(
                ", {}",
                place.address.as_deref().unwrap_or_default()
            ));
        }
        text
    };
    let car = |booking: &Booking| booking.car.as_ref().map_or_else(none, |car| car.id.clone());
    let model = |booking: &Booking| {
        booking
            .model
            .as_ref()
            .map_or_else(none, |model| format!("{} ({})", model.name, model.id))
    };
    let category =
        |booking: &Booking| format!("{} ({})", booking.category.name, booking.category.id);
    let distance = |booking: &Booking| {
        if booking.ilimited_km {
            "unlimited".to_owned()
        } else {
            format!(
                "{} {} ({} a day)",
                booking.max_allowed_distance,
                booking.distance_unit,
                booking.max_allowed_distance_by_day
            )
        }
    };
    let value = |value: &Option<Value>| match value {
        None | Some(Value::Null) => none(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Object(object)) if object.contains_key("Name") => {
            object.get("Name").map_or_else(none, value_text)
        }
        Some(other) => other.to_string(),
    };
    let price = |booking: &Booking| format!("{} {}", booking.price, booking.currency);

    let candidates = [
        ("FromDate", date(&old.from_date), date(&new.from_date)),
        ("ToDate", date(&old.to_date), date(&new.to_date)),
        (
            "DeliveryPlace",
            place(&old.delivery_place),
            place(&new.delivery_place),
        ),
        (
            "ReturnPlace",
            place(&old.return_place),
            place(&new.return_place),
        ),
        ("Car", car(old), car(new)),
        ("Model", model(old), model(new)),
        ("Category", category(old), category(new)),
        ("Distance", distance(old), distance(new)),
        (
            "DeliveryTransportationId",
            value(&old.delivery_transportation_id),
            value(&new.delivery_transportation_id),
        ),
        (
            "ReturnTransportationId",
            value(&old.return_transportation_id),
            value(&new.return_transportation_id),
        ),
        ("Agency", value(&old.agency), value(&new.agency)),
        (
            "CommercialAgreementCode",
            value(&old.commercial_agreement_code),
            value(&new.commercial_agreement_code),
        ),
        ("Price", price(old), price(new)),
        (
            "CurrentStatus",
            old.current_status.to_string(),
            new.current_status.to_string(),
        ),
    ];
    candidates
        .into_iter()
        .filter(|(_, from, to)| from != to)
        .map(|(field, from, to)| Change { field, from, to })
        .collect()
}

/// The comment of a new booking.
pub fn created(user: &str, status: BookingStatus) -> String {
    format!("{user} created the booking ({status})")
}

/// The warning comment of an update refused because the booking is Delivered or Closed.
pub fn update_refused(user: &str, status: BookingStatus) -> String {
    format!("Warning: {user} tried to update the booking, which is {status}; nothing was changed")
}

fn none() -> String {
    "none".to_owned()
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures;

    fn booking() -> Booking {
        fixtures::booking(
            BookingStatus::Reserved,
            json!({
                "Car": {"Id": "AA100AA"},
                "Model": {"Id": 2, "Name": "Chevrolet Onix"},
                "Category": {"Id": 1, "Name": "Económico"},
                "DeliveryPlace": {"Id": 1, "Name": "Aeroparque"},
                "ReturnPlace": {"Id": 1, "Name": "Aeroparque"},
                "MaxAllowedDistance": 500,
                "MaxAllowedDistanceByDay": 250,
                "DistanceUnit": "km",
                "Price": 100,
                "Currency": "USD",
                "DeliveryTransportationId": "AR1234"
            }),
        )
    }

    #[test]
    fn an_unchanged_booking_has_no_changes() {
        assert!(main_changes(&booking(), &booking()).is_empty());
    }

    #[test]
    fn each_main_change_names_its_field_and_values() {
        let old = booking();
        let mut new = booking();
        new.to_date = DateTime::parse_from_rfc3339("2030-01-13T10:00:00-03:00").unwrap();
        new.return_place.id = 3;
        new.return_place.name = "Centro".to_owned();
        new.return_place.is_custom_address = true;
        new.return_place.address = Some("Florida 100".to_owned());
        new.car = None;
        new.ilimited_km = true;
        new.delivery_transportation_id = None;
        new.agency = Some(json!({"Id": 24, "Name": "Viajes del Sur S.A."}));
        new.commercial_agreement_code = Some(json!("AGENCIAS-10"));
        new.price = rust_decimal::Decimal::new(15000, 2);
        new.current_status = BookingStatus::Canceled;
        let texts: Vec<String> = main_changes(&old, &new)
            .iter()
            .map(|change| change.text("api"))
            .collect();
        assert_eq!(
            texts,
            [
                "api changed ToDate from 2030-01-12T10:00:00-03:00 to 2030-01-13T10:00:00-03:00",
                "api changed ReturnPlace from Aeroparque (1) to Centro (3), Florida 100",
                "api changed Car from AA100AA to none",
                "api changed Distance from 500 km (250 a day) to unlimited",
                "api changed DeliveryTransportationId from AR1234 to none",
                "api changed Agency from none to Viajes del Sur S.A.",
                "api changed CommercialAgreementCode from none to AGENCIAS-10",
                "api changed Price from 100 USD to 150.00 USD",
                "api changed CurrentStatus from Reserved to Canceled",
            ]
        );
    }

    #[test]
    fn audit_texts() {
        assert_eq!(
            update_refused("api", BookingStatus::Delivered),
            "Warning: api tried to update the booking, which is Delivered; nothing was changed"
        );
        assert_eq!(
            created("api", BookingStatus::Reserved),
            "api created the booking (Reserved)"
        );
    }
}
