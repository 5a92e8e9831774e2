//! The demo's fleet: cars of the catalogue file's models at its active offices. A car's plate,
//! registration and kilometres follow from today and its last return from the bookings, so
//! the cars are written here and imported over the catalogue file.

use chrono::Datelike;

use super::bookings::Plan;
use super::{ACTIVE_OFFICES, CAR_COUNT, Clock, text};
use crate::collections::BranchOfficeDoc;
use crate::models::{Car, CarPlate, Model};
use crate::status::BookingStatus;

/// The colours of the cars, round robin.
const COLORS: [&str; 6] = [
    "Blanco",
    "Gris Plata",
    "Negro",
    "Rojo",
    "Azul",
    "Gris Oscuro",
];

/// World manufacturer identifiers that start the chassis numbers, by model in Id order.
const WMI: [&str; 8] = ["8AP", "9BG", "8AP", "9BW", "9BR", "988", "8AW", "8AJ"];

/// The plate of car `index`: the Mercosur format (`AB123CD`), its second letter following
/// the registration year.
fn plate(index: i64, year: i32) -> String {
    let series = match year {
        ..=2019 => 'D',
        2020 | 2021 => 'E',
        2022 | 2023 => 'F',
        2024 => 'G',
        _ => 'H',
    };
    let letter = |n: i64| char::from(b'A' + (n.rem_euclid(26)) as u8);
    format!(
        "A{series}{:03}{}{}",
        100 + (index * 37) % 900,
        letter(index * 7 + 2),
        letter(index * 11 + 5)
    )
}

/// The cars, as the catalogue file would have them: car `index` is of the model at
/// `index` in `models` (round robin, in Id order), based at the active office at `index`
/// (round robin), registered between 60 days and about 4 years ago, last returned at the end
/// of its last Closed booking of `plans`.
pub(super) fn cars(
    clock: &Clock,
    models: &[Model],
    offices: &[BranchOfficeDoc],
    plans: &[Plan],
) -> Vec<Car> {
    (0..CAR_COUNT)
        .map(|index| {
            let i = index as i64;
            let model = &models[index % models.len()];
            let wmi = WMI[index % WMI.len()];
            let brand = model.brand.as_ref().map_or("", |brand| brand.name.as_str());
            let office = &offices[index % ACTIVE_OFFICES].office;
            let registered = clock.at(-(60 + (i * 83) % 1_400), 10, 0);
            let year = registered.year();
            let plate = plate(i, year);
            let age_years = i64::from(clock.today.year() - year).max(0);
            let last_return = plans
                .iter()
                .filter(|plan| plan.car == index && plan.status == BookingStatus::Closed)
                .map(|plan| plan.status_date)
                .max();
            Car {
                id: plate.clone(),
                model: model.clone(),
                current_branch_office_id: Some(office.id),
                current_branch_office: Some(office.name.clone()),
                branch_office_owner: Some(office.name.clone()),
                current_kms: 3_000 + age_years * 21_000 + (i * 7_919) % 15_000,
                fuel_type: model.fuel_type.clone(),
                gasoline: 8 - i % 3,
                friendly_name: Some(format!("{} {plate}", model.name)),
                current_plate_id: Some(plate.clone()),
                chassis_identification: Some(format!(
                    "{}{}{:02}{:08}",
                    wmi,
                    model.sipp,
                    year % 100,
                    10_000_000 + (i * 1_234_567) % 89_000_000
                )),
                current_plate: Some(CarPlate {
                    id: plate,
                    issuing_country: text("AR"),
                    issuing_state: text(["CABA", "Córdoba", "Mendoza"][index % ACTIVE_OFFICES]),
                }),
                color: text(COLORS[index % COLORS.len()]),
                year: Some(i64::from(year)),
                toll_device_id: if index % ACTIVE_OFFICES == 0 {
                    Some(format!("TAG-{:06}", 100_000 + i * 4_321))
                } else {
                    None
                },
                battery_number: None,
                creation_date: Some(registered),
                inactive_date: None,
                leased_to_company: None,
                supplier_full_name: Some(format!("{brand} Argentina S.A.")),
                last_return_date: last_return,
            }
        })
        .collect()
}
