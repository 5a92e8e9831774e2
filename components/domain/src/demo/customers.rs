//! The demo's customers: people from Argentina and abroad, a company and the travel agency
//! some bookings come through. The catalogue file has no customers, so they are built here,
//! their ages and document dates relative to today.

use chrono::{Datelike, TimeDelta};

use super::{
    AGENCY_CUSTOMER_ID, AGENCY_NAME, Clock, ascii_lower, calendar, global_id, mix, text,
    years_between,
};
use crate::collections::CustomerDoc;
use crate::json::mask_card_number;
use crate::models::{CreditCard, Customer, Membership};

struct PersonSpec {
    first: &'static str,
    last: &'static str,
    street: &'static str,
    number: &'static str,
    zip: &'static str,
    city: &'static str,
    state: &'static str,
    country: &'static str,
    /// ISO 3166 alpha-2 code of the country.
    iso: &'static str,
    phone: &'static str,
    age: i64,
}

const PEOPLE: [PersonSpec; 22] = [
    PersonSpec {
        first: "Martina",
        last: "González",
        street: "Av. Santa Fe",
        number: "2450",
        zip: "C1123",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 5412-3308",
        age: 34,
    },
    PersonSpec {
        first: "Santiago",
        last: "Rodríguez",
        street: "Av. Colón",
        number: "1120",
        zip: "X5000",
        city: "Córdoba",
        state: "Córdoba",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 351 622-4471",
        age: 41,
    },
    PersonSpec {
        first: "Valentina",
        last: "Fernández",
        street: "Bv. Oroño",
        number: "845",
        zip: "S2000",
        city: "Rosario",
        state: "Santa Fe",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 341 455-9012",
        age: 29,
    },
    PersonSpec {
        first: "Mateo",
        last: "López",
        street: "Calle Belgrano",
        number: "1530",
        zip: "M5500",
        city: "Mendoza",
        state: "Mendoza",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 261 533-7120",
        age: 52,
    },
    PersonSpec {
        first: "Camila",
        last: "Martínez",
        street: "Calle 7",
        number: "918",
        zip: "B1900",
        city: "La Plata",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 221 480-2235",
        age: 23,
    },
    PersonSpec {
        first: "Benjamín",
        last: "García",
        street: "Av. Cabildo",
        number: "3011",
        zip: "C1429",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 6023-1189",
        age: 38,
    },
    PersonSpec {
        first: "Sofía",
        last: "Pérez",
        street: "Calle Caseros",
        number: "655",
        zip: "A4400",
        city: "Salta",
        state: "Salta",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 387 511-8864",
        age: 45,
    },
    PersonSpec {
        first: "Joaquín",
        last: "Sánchez",
        street: "Av. Argentina",
        number: "230",
        zip: "Q8300",
        city: "Neuquén",
        state: "Neuquén",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 299 577-3021",
        age: 31,
    },
    PersonSpec {
        first: "Lucía",
        last: "Romero",
        street: "Av. Colón",
        number: "2780",
        zip: "B7600",
        city: "Mar del Plata",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 223 590-4413",
        age: 27,
    },
    PersonSpec {
        first: "Tomás",
        last: "Díaz",
        street: "Calle 25 de Mayo",
        number: "410",
        zip: "T4000",
        city: "San Miguel de Tucumán",
        state: "Tucumán",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 381 430-6657",
        age: 60,
    },
    PersonSpec {
        first: "Isabella",
        last: "Álvarez",
        street: "Av. Rivadavia",
        number: "5120",
        zip: "C1424",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 4987-2210",
        age: 36,
    },
    PersonSpec {
        first: "João",
        last: "Silva",
        street: "Rua Augusta",
        number: "1508",
        zip: "01304-001",
        city: "São Paulo",
        state: "SP",
        country: "Brasil",
        iso: "BR",
        phone: "+55 11 98765-4321",
        age: 36,
    },
    PersonSpec {
        first: "Ana",
        last: "Souza",
        street: "Rua Visconde de Pirajá",
        number: "330",
        zip: "22410-002",
        city: "Rio de Janeiro",
        state: "RJ",
        country: "Brasil",
        iso: "BR",
        phone: "+55 21 99654-1200",
        age: 42,
    },
    PersonSpec {
        first: "Carlos",
        last: "Muñoz",
        street: "Av. Providencia",
        number: "1760",
        zip: "7500000",
        city: "Santiago",
        state: "Región Metropolitana",
        country: "Chile",
        iso: "CL",
        phone: "+56 9 8765 4312",
        age: 48,
    },
    PersonSpec {
        first: "Francisca",
        last: "Rojas",
        street: "Av. Brasil",
        number: "2950",
        zip: "2340000",
        city: "Valparaíso",
        state: "Valparaíso",
        country: "Chile",
        iso: "CL",
        phone: "+56 9 7123 8890",
        age: 33,
    },
    PersonSpec {
        first: "Emily",
        last: "Johnson",
        street: "Congress Ave",
        number: "901",
        zip: "78701",
        city: "Austin",
        state: "TX",
        country: "United States",
        iso: "US",
        phone: "+1 512 555 0148",
        age: 39,
    },
    PersonSpec {
        first: "Michael",
        last: "Brown",
        street: "Larimer St",
        number: "1450",
        zip: "80202",
        city: "Denver",
        state: "CO",
        country: "United States",
        iso: "US",
        phone: "+1 303 555 0172",
        age: 55,
    },
    PersonSpec {
        first: "Laura",
        last: "Gómez",
        street: "Calle de Alcalá",
        number: "118",
        zip: "28009",
        city: "Madrid",
        state: "Madrid",
        country: "España",
        iso: "ES",
        phone: "+34 612 345 678",
        age: 44,
    },
    PersonSpec {
        first: "Diego",
        last: "Herrera",
        street: "Av. 18 de Julio",
        number: "1333",
        zip: "11100",
        city: "Montevideo",
        state: "Montevideo",
        country: "Uruguay",
        iso: "UY",
        phone: "+598 94 123 456",
        age: 37,
    },
    PersonSpec {
        first: "Agustina",
        last: "Torres",
        street: "Calle Alsina",
        number: "77",
        zip: "B8000",
        city: "Bahía Blanca",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 291 441-7765",
        age: 21,
    },
    PersonSpec {
        first: "Nicolás",
        last: "Castro",
        street: "Av. Corrientes",
        number: "4120",
        zip: "C1195",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 3344-9921",
        age: 26,
    },
    PersonSpec {
        first: "Florencia",
        last: "Ruiz",
        street: "Av. Hipólito Yrigoyen",
        number: "360",
        zip: "X5000",
        city: "Córdoba",
        state: "Córdoba",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 351 700-1458",
        age: 31,
    },
];

/// Every customer, Ids from 1: the people, then the company and the agency.
pub(super) fn customers(clock: &Clock) -> Vec<CustomerDoc> {
    let mut customers: Vec<CustomerDoc> = PEOPLE
        .iter()
        .zip(1_i64..)
        .map(|(person, id)| person_customer(clock, person, id))
        .collect();
    customers.push(company_customer(
        clock,
        23,
        "Bodega Los Andes S.A.",
        "30-71234567-9",
        ("Ruta Provincial 15", "4800", "M5509"),
        ("Luján de Cuyo", "Mendoza"),
        "+54 261 498-2200",
        false,
    ));
    customers.push(company_customer(
        clock,
        AGENCY_CUSTOMER_ID,
        AGENCY_NAME,
        "30-70987654-1",
        ("Florida", "537", "C1005"),
        ("Ciudad Autónoma de Buenos Aires", "CABA"),
        "+54 11 4311-7788",
        true,
    ));
    customers
}

fn person_customer(clock: &Clock, person: &PersonSpec, id: i64) -> CustomerDoc {
    let argentine = person.iso == "AR";
    let birth = clock.date(-(person.age * 365 + person.age / 4 + 30 + (id * 37) % 300));
    let document_id = if argentine {
        (46_000_000 - person.age * 550_000 + (id * 7_919) % 100_000).to_string()
    } else {
        format!(
            "{}{:07}",
            person.iso,
            1_000_000 + (id * 104_729) % 9_000_000
        )
    };
    let licence_expiration = clock.date(200 + (id * 97) % 1_500);
    let licence_issuance = licence_expiration - TimeDelta::days(5 * 365 + 1);
    let document_issuance = clock.date(-(100 + (id * 211) % 3_000));
    let email_domain = ["example.com", "example.org", "example.net"][(id % 3) as usize];
    let card_brand = ["VISA", "MASTERCARD", "AMEX"][(id % 3) as usize];
    let full_name = format!("{} {}", person.first, person.last);
    let credit_cards = if id % 4 == 3 {
        Vec::new()
    } else {
        vec![CreditCard {
            kind: text(card_brand),
            number: Some(mask_card_number(&format!(
                "{:016}",
                4_000_000_000_000_000 + mix(id as u64) % 1_000_000_000_000
            ))),
            expiration_month: Some(1 + id % 12),
            expiration_year: Some(i64::from(clock.today.year()) + 1 + id % 4),
            security_code: None,
            card_holder_name: Some(full_name.to_uppercase()),
        }]
    };
    let memberships = if id % 5 == 0 {
        vec![Membership {
            id,
            membership_type: Some(1),
            description: text("Aerolíneas Plus"),
            number: Some(format!("{:010}", 3_000_000_000 + id * 7_654_321)),
            expiration_date: Some(calendar(clock.date(365 + id * 11))),
            used_in_booking: false,
            booking_brand_ids: Vec::new(),
        }]
    } else {
        Vec::new()
    };
    CustomerDoc {
        customer: Customer {
            id,
            global_id: Some(global_id(id as u64)),
            name: Some(full_name),
            lastname: text(person.last),
            firstname: text(person.first),
            document_id: Some(document_id.clone()),
            document_type_id: Some(if argentine { 1 } else { 2 }),
            email_address: Some(format!(
                "{}.{}@{email_domain}",
                ascii_lower(person.first),
                ascii_lower(person.last)
            )),
            cell_phone: text(person.phone),
            address: text(person.street),
            address_number: text(person.number),
            address_department: if id % 3 == 0 {
                Some(format!(
                    "{}º {}",
                    1 + id % 9,
                    ["A", "B", "C"][(id % 3) as usize]
                ))
            } else {
                None
            },
            zip_code: text(person.zip),
            city: text(person.city),
            state: text(person.state),
            region: None,
            country: text(person.country),
            birth_date: Some(calendar(birth)),
            birth_country: text(person.country),
            birth_state: text(person.state),
            age: Some(years_between(birth, clock.today)),
            credit_cards,
            memberships,
            driver_licence_number: Some(if argentine {
                document_id
            } else {
                format!(
                    "{}-{:08}",
                    person.iso,
                    10_000_000 + (id * 48_271) % 89_000_000
                )
            }),
            driver_licence_country: text(person.iso),
            driver_license_expiration: Some(calendar(licence_expiration)),
            driver_license_issuance: Some(calendar(licence_issuance)),
            driver_license_renach_number: None,
            driver_license_category: text(if argentine { "B1" } else { "B" }),
            driver_license_state: text(person.state),
            document_id_issuance: Some(calendar(document_issuance)),
            document_id_expiration: Some(calendar(
                document_issuance + TimeDelta::days(15 * 365 + 3),
            )),
            document_id_issuance_state: text(person.state),
            document_id_issuance_country: text(person.iso),
            fiscal_condition_id: Some(1),
            notes: if id % 7 == 0 {
                text("Cliente frecuente")
            } else {
                None
            },
            is_company: false,
            is_agency: false,
            is_provider: false,
            is_hotel: false,
            has_web_login: id % 3 == 0,
            commercial_agreements: Vec::new(),
            iata_code: None,
            personal_code: None,
            state_registration: None,
            municipal_registration: None,
        },
        created_by_user_id: None,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call per company row of the demo table"
)]
fn company_customer(
    clock: &Clock,
    id: i64,
    name: &str,
    tax_id: &str,
    (street, number, zip): (&str, &str, &str),
    (city, state): (&str, &str),
    phone: &str,
    agency: bool,
) -> CustomerDoc {
    let slug: String = ascii_lower(name)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    CustomerDoc {
        customer: Customer {
            id,
            global_id: Some(global_id(id as u64)),
            name: text(name),
            document_id: text(tax_id),
            document_type_id: Some(3),
            email_address: Some(format!("reservas@{slug}.example.com")),
            cell_phone: text(phone),
            address: text(street),
            address_number: text(number),
            zip_code: text(zip),
            city: text(city),
            state: text(state),
            country: text("Argentina"),
            fiscal_condition_id: Some(2),
            notes: text(if agency {
                "Agencia de viajes: paga la tarifa, el pasajero paga adicionales y cargos"
            } else {
                "Cuenta corporativa"
            }),
            is_company: true,
            is_agency: agency,
            has_web_login: true,
            commercial_agreements: if agency {
                vec!["AGENCIAS-10".to_owned()]
            } else {
                vec!["CORP-ANDES".to_owned()]
            },
            iata_code: if agency { text("55512345") } else { None },
            state_registration: Some(format!("IIBB {tax_id}")),
            memberships: Vec::new(),
            credit_cards: Vec::new(),
            document_id_issuance: Some(calendar(clock.date(-(2_000 + id * 13)))),
            ..Customer::default()
        },
        created_by_user_id: None,
    }
}
