//! The catalogue file of `rentald catalog import` and `rentald catalog export`
//! (docs/catalog.md): JSON Lines, a header line, then one line per branch office, place,
//! category, model, car, additional or tariff, each with the fields of its API model.
//!
//! A line holds a record's own fields only: references to other records are `{"Id": n}`
//! objects or ids, and what the stored documents repeat from other records (an office's
//! places, a category's models, a model's category, a car's model and office name, a place's
//! office name and IATA code) is derived again by [`Catalog::records`], which is also how the
//! stored catalogue reads back ([`Catalog::from_documents`]).
//!
//! Pure: the host reads the file and the tenant's stored catalogue, [`import`] parses and
//! validates the file and merges it over the stored catalogue, and the host writes
//! [`Catalog::records`] in one transaction.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use rust_decimal::Decimal;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::collections::{self, BranchOfficeDoc};
use crate::dates::parse_time_zone;
use crate::json;
use crate::models::{Additional, BranchOffice, Car, Category, Model, Place, Tariff};
use crate::pricing;
use crate::store::{Record, Stored};

/// The `Format` of the header line.
pub const FORMAT: &str = "rental-catalog";

/// At most this many errors are shown; the rest are counted.
pub const MAX_ERRORS: usize = 50;

/// The stored collections of the catalogue, each with the index that lists all its documents.
pub const COLLECTIONS: [(&str, &str); 6] = [
    (
        collections::branch_offices::COLLECTION,
        collections::branch_offices::BY_ID,
    ),
    (
        collections::categories::COLLECTION,
        collections::categories::BY_ID,
    ),
    (
        collections::car_models::COLLECTION,
        collections::car_models::BY_ID,
    ),
    (collections::cars::COLLECTION, collections::cars::BY_ID),
    (
        collections::additionals::COLLECTION,
        collections::additionals::BY_ID,
    ),
    (
        collections::tariffs::COLLECTION,
        collections::tariffs::BY_ID,
    ),
];

/// A version of the file format. Import reads every version listed here; export writes
/// [`Version::LATEST`]. A new version adds a variant and its line reader in [`read_item`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
}

impl Version {
    pub const LATEST: Version = Version::V1;

    /// The number written in the header's `Version`.
    pub const fn number(self) -> u64 {
        match self {
            Version::V1 => 1,
        }
    }

    fn from_number(number: u64) -> Option<Self> {
        match number {
            1 => Some(Version::V1),
            _ => None,
        }
    }
}

/// What a line describes, in dependency order: a record refers only to kinds before it
/// (except a category's `PrincipalModelId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    BranchOffice,
    Place,
    Category,
    Model,
    Car,
    Additional,
    Tariff,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::BranchOffice,
        Kind::Place,
        Kind::Category,
        Kind::Model,
        Kind::Car,
        Kind::Additional,
        Kind::Tariff,
    ];

    /// The line's `Kind`.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::BranchOffice => "BranchOffice",
            Kind::Place => "Place",
            Kind::Category => "Category",
            Kind::Model => "Model",
            Kind::Car => "Car",
            Kind::Additional => "Additional",
            Kind::Tariff => "Tariff",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// Fields of the API model that a line leaves out: the stored document repeats them from
    /// other records.
    const fn derived_fields(self) -> &'static [&'static str] {
        match self {
            Kind::BranchOffice => &["Places"],
            Kind::Place => &["BranchOfficeName", "BranchOfficeIATACode"],
            Kind::Category => &["Models"],
            Kind::Car => &["CurrentBranchOffice"],
            Kind::Model | Kind::Additional | Kind::Tariff => &[],
        }
    }

    /// Fields of the API model that a line writes as a reference, `{"Id": n}` (or `null`).
    const fn reference_fields(self) -> &'static [&'static str] {
        match self {
            Kind::Model => &["Category"],
            Kind::Car => &["Model"],
            _ => &[],
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A record's id: a number, or a text for cars.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Int(i64),
    Text(String),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Int(id) => write!(f, "{id}"),
            Key::Text(id) => write!(f, "{id:?}"),
        }
    }
}

/// One problem of the file, at a line and a field path (`Brackets[1].DaysTo`; empty for the
/// whole line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub path: String,
    pub message: String,
}

impl LineError {
    fn new(line: usize, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            line,
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "line {}: {}: {}", self.line, self.path, self.message)
        }
    }
}

/// Why a file was refused: every problem found, in line order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct InvalidCatalog {
    pub errors: Vec<LineError>,
}

impl fmt::Display for InvalidCatalog {
    /// One error a line, at most [`MAX_ERRORS`], then how many more there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.errors.len();
        write!(
            f,
            "the catalogue file has {count} error{}, nothing was imported",
            if count == 1 { "" } else { "s" }
        )?;
        for error in self.errors.iter().take(MAX_ERRORS) {
            write!(f, "\n{error}")?;
        }
        if count > MAX_ERRORS {
            write!(f, "\n... and {} more", count - MAX_ERRORS)?;
        }
        Ok(())
    }
}

/// One record of the catalogue, as its API model. Derived fields may hold anything: a line
/// never carries them and [`Catalog::records`] derives them again.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    BranchOffice(BranchOfficeDoc),
    Place(Place),
    Category(Category),
    Model(Box<Model>),
    Car(Box<Car>),
    Additional(Additional),
    Tariff(Tariff),
}

/// A problem of one record, and the record it concerns when it is another one.
struct Problem {
    path: String,
    message: String,
    other: Option<(Kind, Key)>,
}

impl Problem {
    fn own(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
            other: None,
        }
    }
}

/// The `Active` flag of a branch office line (the store's, beyond the API model).
#[derive(Default, Deserialize)]
#[serde(default)]
struct ActiveFlag {
    #[serde(rename = "Active")]
    active: bool,
}

/// The header line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    #[serde(rename = "Format")]
    format: String,
    #[serde(rename = "Version")]
    version: u64,
}

impl Item {
    fn kind(&self) -> Kind {
        match self {
            Item::BranchOffice(_) => Kind::BranchOffice,
            Item::Place(_) => Kind::Place,
            Item::Category(_) => Kind::Category,
            Item::Model(_) => Kind::Model,
            Item::Car(_) => Kind::Car,
            Item::Additional(_) => Kind::Additional,
            Item::Tariff(_) => Kind::Tariff,
        }
    }

    fn key(&self) -> Key {
        match self {
            Item::BranchOffice(doc) => Key::Int(doc.office.id),
            Item::Place(place) => Key::Int(place.id),
            Item::Category(category) => Key::Int(category.id),
            Item::Model(model) => Key::Int(model.id),
            Item::Car(car) => Key::Text(car.id.clone()),
            Item::Additional(additional) => Key::Int(additional.id),
            Item::Tariff(tariff) => Key::Int(tariff.id),
        }
    }

    /// The record of a version 1 line of `kind`.
    fn from_v1_line(kind: Kind, line: &str) -> Result<Self, (String, String)> {
        Ok(match kind {
            Kind::BranchOffice => {
                let office: BranchOffice = from_line(line)?;
                let flag: ActiveFlag = from_line(line)?;
                Item::BranchOffice(BranchOfficeDoc {
                    office,
                    active: flag.active,
                })
            }
            Kind::Place => Item::Place(from_line(line)?),
            Kind::Category => Item::Category(from_line(line)?),
            Kind::Model => Item::Model(Box::new(from_line(line)?)),
            Kind::Car => Item::Car(Box::new(from_line(line)?)),
            Kind::Additional => Item::Additional(from_line(line)?),
            Kind::Tariff => Item::Tariff(from_line(line)?),
        })
    }

    /// The record's line, without its `Kind`: the API model's fields less the derived ones,
    /// references reduced to their `Id`.
    fn fields(&self) -> Result<Map<String, Value>, serde_json::Error> {
        let value = match self {
            Item::BranchOffice(doc) => serde_json::to_value(&doc.office)?,
            Item::Place(place) => serde_json::to_value(place)?,
            Item::Category(category) => serde_json::to_value(category)?,
            Item::Model(model) => serde_json::to_value(model)?,
            Item::Car(car) => serde_json::to_value(car)?,
            Item::Additional(additional) => serde_json::to_value(additional)?,
            Item::Tariff(tariff) => serde_json::to_value(tariff)?,
        };
        let Value::Object(mut fields) = value else {
            return Err(serde::ser::Error::custom("a catalogue record is an object"));
        };
        let kind = self.kind();
        for name in kind.derived_fields() {
            fields.remove(*name);
        }
        for name in kind.reference_fields() {
            if let Some(Value::Object(target)) = fields.get(*name) {
                let id = target.get("Id").cloned().unwrap_or(Value::Null);
                fields.insert(
                    (*name).to_owned(),
                    Value::Object(Map::from_iter([("Id".to_owned(), id)])),
                );
            }
        }
        if let Item::BranchOffice(doc) = self {
            fields.insert("Active".to_owned(), Value::Bool(doc.active));
        }
        Ok(fields)
    }

    /// The domain rules of the record alone.
    fn check(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut positive_id = |id: i64| {
            if id <= 0 {
                problems.push(Problem::own("Id", "must be a positive integer"));
            }
        };
        match self {
            Item::BranchOffice(doc) => positive_id(doc.office.id),
            Item::Place(place) => positive_id(place.id),
            Item::Category(category) => positive_id(category.id),
            Item::Model(model) => positive_id(model.id),
            Item::Additional(additional) => positive_id(additional.id),
            Item::Tariff(tariff) => positive_id(tariff.id),
            Item::Car(car) => {
                if car.id.trim().is_empty() || car.id.trim() != car.id {
                    problems.push(Problem::own(
                        "Id",
                        "must not be empty or start or end with spaces",
                    ));
                }
            }
        }
        let name = match self {
            Item::BranchOffice(doc) => Some(&doc.office.name),
            Item::Place(place) => Some(&place.name),
            Item::Category(category) => Some(&category.name),
            Item::Model(model) => Some(&model.name),
            Item::Additional(additional) => Some(&additional.name),
            Item::Tariff(tariff) => Some(&tariff.name),
            Item::Car(_) => None,
        };
        if name.is_some_and(|name| name.trim().is_empty()) {
            problems.push(Problem::own("Name", "must not be empty"));
        }
        let mut amounts: Vec<(String, Option<Decimal>)> = Vec::new();
        let mut counts: Vec<(&str, i64, i64)> = Vec::new();
        match self {
            Item::BranchOffice(doc) => {
                let office = &doc.office;
                if let Some(zone) = &office.time_zone
                    && let Err(error) = parse_time_zone(zone)
                {
                    problems.push(Problem::own("TimeZone", format!("{error} (an IANA name)")));
                }
                check_position(office.latitude, office.longitude, &mut problems);
            }
            Item::Place(place) => {
                amounts.push(("Price".to_owned(), Some(place.price)));
                check_position(place.latitude, place.longitude, &mut problems);
            }
            Item::Category(category) => {
                amounts.extend(franchises(
                    category.franchise,
                    category.franchise_damage,
                    category.franchise_rollover,
                    category.franchise_theft,
                    category.franchise_hail,
                ));
            }
            Item::Model(model) => {
                amounts.extend(franchises(
                    model.franchise,
                    model.franchise_damage,
                    model.franchise_rollover,
                    model.franchise_theft,
                    model.franchise_hail,
                ));
                amounts.push(("DailyPrice".to_owned(), model.daily_price));
                amounts.push(("LowerPrice".to_owned(), model.lower_price));
                counts.extend([
                    ("Doors", model.doors, 0),
                    ("Passengers", model.passengers, 0),
                    ("BigLuggage", model.big_luggage, 0),
                    ("SmallLuggage", model.small_luggage, 0),
                ]);
                for (index, attribute) in model.model_attributes.iter().enumerate() {
                    if attribute.model_id != model.id {
                        problems.push(Problem::own(
                            &format!("ModelAttributes[{index}].ModelId"),
                            format!("must be the model's Id, {}", model.id),
                        ));
                    }
                }
            }
            Item::Car(car) => {
                counts.extend([
                    ("CurrentKms", car.current_kms, 0),
                    ("Gasoline", car.gasoline, 0),
                ]);
            }
            Item::Additional(additional) => {
                amounts.push(("Price".to_owned(), Some(additional.price)));
                counts.extend([
                    (
                        "MaxQuantityPerBooking",
                        additional.max_quantity_per_booking,
                        1,
                    ),
                    ("Stock", additional.stock, 0),
                ]);
            }
            Item::Tariff(tariff) => check_tariff(tariff, &mut amounts, &mut problems),
        }
        for (path, amount) in amounts {
            if amount.is_some_and(|amount| amount < Decimal::ZERO) {
                problems.push(Problem::own(&path, "must not be negative"));
            }
        }
        for (path, count, least) in counts {
            if count < least {
                problems.push(Problem::own(path, format!("must be at least {least}")));
            }
        }
        problems
    }

    /// The rules that involve other records of `catalog`.
    ///
    /// Records in `refused` are on lines refused for other reasons: references to them are
    /// not reported again.
    fn check_references(&self, catalog: &Catalog, refused: &BTreeSet<(Kind, Key)>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut exists = |path: &str, kind: Kind, key: Key| {
            let target = (kind, key);
            if !catalog.items.contains_key(&target) && !refused.contains(&target) {
                let (kind, key) = target;
                problems.push(Problem::own(
                    path,
                    format!("{kind} {key} is neither in the file nor in the tenant's catalogue"),
                ));
            }
        };
        match self {
            Item::BranchOffice(_) | Item::Additional(_) => {}
            Item::Place(place) => exists(
                "BranchOfficeId",
                Kind::BranchOffice,
                Key::Int(place.branch_office_id),
            ),
            Item::Category(category) => {
                if let Some(id) = category.principal_model_id {
                    exists("PrincipalModelId", Kind::Model, Key::Int(id));
                }
            }
            Item::Model(model) => {
                if let Some(category) = &model.category {
                    exists("Category.Id", Kind::Category, Key::Int(category.id));
                }
            }
            Item::Car(car) => {
                exists("Model.Id", Kind::Model, Key::Int(car.model.id));
                if let Some(id) = car.current_branch_office_id {
                    exists("CurrentBranchOfficeId", Kind::BranchOffice, Key::Int(id));
                }
            }
            Item::Tariff(tariff) => {
                exists("CategoryId", Kind::Category, Key::Int(tariff.category_id));
                if let Some(id) = tariff.model_id {
                    exists("ModelId", Kind::Model, Key::Int(id));
                    if let Some(model) = catalog.model(id) {
                        let category = model.category.as_ref().map(|c| c.id);
                        if category != Some(tariff.category_id) {
                            problems.push(Problem {
                                path: "ModelId".to_owned(),
                                message: format!(
                                    "Model {id} is not of Category {}, the tariff's",
                                    tariff.category_id
                                ),
                                other: Some((Kind::Model, Key::Int(id))),
                            });
                        }
                    }
                }
            }
        }
        problems
    }
}

/// The franchise amounts of a category or model, with their field names.
fn franchises(
    franchise: Option<Decimal>,
    damage: Option<Decimal>,
    rollover: Option<Decimal>,
    theft: Option<Decimal>,
    hail: Option<Decimal>,
) -> [(String, Option<Decimal>); 5] {
    [
        ("Franchise".to_owned(), franchise),
        ("FranchiseDamage".to_owned(), damage),
        ("FranchiseRollover".to_owned(), rollover),
        ("FranchiseTheft".to_owned(), theft),
        ("FranchiseHail".to_owned(), hail),
    ]
}

fn check_position(
    latitude: Option<Decimal>,
    longitude: Option<Decimal>,
    problems: &mut Vec<Problem>,
) {
    for (path, value, limit) in [("Latitude", latitude, 90), ("Longitude", longitude, 180)] {
        if value.is_some_and(|value| value.abs() > Decimal::from(limit)) {
            problems.push(Problem::own(
                path,
                format!("must be between -{limit} and {limit}"),
            ));
        }
    }
}

/// A tariff's currency, its brackets' shape (as pricing requires it) and their amounts.
fn check_tariff(
    tariff: &Tariff,
    amounts: &mut Vec<(String, Option<Decimal>)>,
    problems: &mut Vec<Problem>,
) {
    let currency = tariff.currency.as_str();
    let is_code = currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase());
    if !currency.is_empty() && !is_code {
        problems.push(Problem::own(
            "Currency",
            "must be a three-letter upper-case currency code, or empty for the tenant's currency setting",
        ));
    }
    if let Err(detail) = pricing::ordered_brackets(tariff) {
        problems.push(Problem::own(
            "Brackets",
            format!(
                "the tariff {detail}; brackets must cover day 1 onwards without gap or overlap"
            ),
        ));
    }
    for (index, bracket) in tariff.brackets.iter().enumerate() {
        let path = format!("Brackets[{index}].DailyAmount");
        if is_code && bracket.daily_amount.scale() > pricing::minor_units(currency) {
            problems.push(Problem::own(
                &path,
                format!(
                    "has more decimals than {currency} has ({})",
                    pricing::minor_units(currency)
                ),
            ));
        }
        amounts.push((path, Some(bracket.daily_amount)));
    }
}

/// A value read from a line by serde, or the field path and message of why not.
fn from_line<T: DeserializeOwned>(line: &str) -> Result<T, (String, String)> {
    let mut deserializer = serde_json::Deserializer::from_str(line);
    serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| (json::error_path(error.path()), json_message(error.inner())))
}

/// A serde_json message without its "at line 1 column N", which would name the line's
/// position in a one-line document rather than in the file.
fn json_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) if error.line() > 0 => message.to_owned(),
        _ => text,
    }
}

/// Fields of `given` that `expected` lacks (unknown) and fields of `expected` that `given`
/// lacks (missing), recursively through objects and arrays.
fn compare_fields(
    given: &Value,
    expected: &Value,
    path: &str,
    problems: &mut Vec<(String, String)>,
) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (given, expected) {
        (Value::Object(given), Value::Object(expected)) => {
            for (key, value) in given {
                match expected.get(key) {
                    Some(target) => compare_fields(value, target, &join(key), problems),
                    None if path.is_empty() && key == "Kind" => {}
                    None => problems.push((join(key), "unknown field".to_owned())),
                }
            }
            for key in expected.keys().filter(|key| !given.contains_key(*key)) {
                problems.push((join(key), "missing field".to_owned()));
            }
        }
        (Value::Array(given), Value::Array(expected)) => {
            for (index, (value, target)) in given.iter().zip(expected).enumerate() {
                compare_fields(value, target, &format!("{path}[{index}]"), problems);
            }
        }
        _ => {}
    }
}

/// The format version of the header line.
fn read_header(line: &str) -> Result<Version, LineError> {
    let header: Header = from_line(line).map_err(|(path, message)| {
        LineError::new(
            1,
            path,
            format!(
                "{message} (line 1 is the header {})",
                header_line(Version::LATEST)
            ),
        )
    })?;
    if header.format != FORMAT {
        return Err(LineError::new(
            1,
            "Format",
            format!("is {:?}, expected {FORMAT:?}", header.format),
        ));
    }
    Version::from_number(header.version).ok_or_else(|| {
        LineError::new(
            1,
            "Version",
            format!(
                "catalogue format version {} is not supported; this rentald reads version {}",
                header.version,
                Version::LATEST.number()
            ),
        )
    })
}

fn header_line(version: Version) -> String {
    format!(
        "{{\"Format\":\"{FORMAT}\",\"Version\":{}}}",
        version.number()
    )
}

/// The kind and id a line claims, when they can be read: a line refused for another field
/// still counts for the references to it, so that one bad line gives one error.
fn claimed(value: &Value) -> Option<(Kind, Key)> {
    let kind = Kind::from_name(value.get("Kind")?.as_str()?)?;
    let id = value.get("Id")?;
    let key = match kind {
        Kind::Car => Key::Text(id.as_str()?.to_owned()),
        _ => Key::Int(id.as_i64()?),
    };
    Some((kind, key))
}

/// A line that was refused: the kind and id it claims, if readable, and its problems.
type Refused = (Option<(Kind, Key)>, Vec<LineError>);

/// The record of a line, or every problem the line alone has.
fn read_item(version: Version, number: usize, line: &str) -> Result<Item, Refused> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        let message = format!(
            "invalid JSON at column {}: {}",
            e.column(),
            json_message(&e)
        );
        (None, vec![LineError::new(number, "", message)])
    })?;
    let claim = claimed(&value);
    read_value(version, number, line, &value).map_err(|errors| (claim, errors))
}

/// The record of a line read as `value`, or every problem the line alone has.
fn read_value(
    version: Version,
    number: usize,
    line: &str,
    value: &Value,
) -> Result<Item, Vec<LineError>> {
    let error = |path: &str, message: String| vec![LineError::new(number, path, message)];
    let Some(object) = value.as_object() else {
        return Err(error("", "a line is a JSON object with a Kind".to_owned()));
    };
    let kind = match object.get("Kind") {
        None => return Err(error("Kind", "missing field".to_owned())),
        Some(Value::String(name)) => Kind::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Kind::ALL.iter().map(|kind| kind.name()).collect();
            error(
                "Kind",
                format!(
                    "unknown kind {name:?}; expected one of {}",
                    known.join(", ")
                ),
            )
        })?,
        Some(other) => return Err(error("Kind", format!("must be a string, found {other}"))),
    };
    let item = match version {
        Version::V1 => Item::from_v1_line(kind, line),
    }
    .map_err(|(path, message)| error(&path, message))?;
    let fields = item
        .fields()
        .map_err(|e| error("", format!("cannot be read back: {e}")))?;
    let mut problems = Vec::new();
    compare_fields(value, &Value::Object(fields), "", &mut problems);
    problems.extend(
        item.check()
            .into_iter()
            .map(|problem| (problem.path, problem.message)),
    );
    if problems.is_empty() {
        Ok(item)
    } else {
        Err(problems
            .into_iter()
            .map(|(path, message)| LineError::new(number, path, message))
            .collect())
    }
}

/// A tenant's catalogue: every record by kind and id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    items: BTreeMap<(Kind, Key), Item>,
}

impl Catalog {
    /// The catalogue of stored documents, given as `(collection, body)` from the collections
    /// of [`COLLECTIONS`].
    ///
    /// Errors: a body that is not its collection's document, or a collection not in
    /// [`COLLECTIONS`].
    pub fn from_documents<'a>(
        documents: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, serde_json::Error> {
        let mut catalog = Self::default();
        for (collection, body) in documents {
            let item = match collection {
                collections::branch_offices::COLLECTION => {
                    let mut doc: BranchOfficeDoc = serde_json::from_str(body)?;
                    for place in std::mem::take(&mut doc.office.places) {
                        catalog.insert(Item::Place(place));
                    }
                    Item::BranchOffice(doc)
                }
                collections::categories::COLLECTION => Item::Category(serde_json::from_str(body)?),
                collections::car_models::COLLECTION => Item::Model(serde_json::from_str(body)?),
                collections::cars::COLLECTION => Item::Car(serde_json::from_str(body)?),
                collections::additionals::COLLECTION => {
                    Item::Additional(serde_json::from_str(body)?)
                }
                collections::tariffs::COLLECTION => Item::Tariff(serde_json::from_str(body)?),
                other => {
                    return Err(serde::de::Error::custom(format!(
                        "{other} is not a catalogue collection"
                    )));
                }
            };
            catalog.insert(item);
        }
        Ok(catalog)
    }

    fn insert(&mut self, item: Item) {
        self.items.insert((item.kind(), item.key()), item);
    }

    /// How many records of `kind` the catalogue has.
    pub fn count(&self, kind: Kind) -> usize {
        self.items.keys().filter(|(k, _)| *k == kind).count()
    }

    fn office(&self, id: i64) -> Option<&BranchOffice> {
        match self.items.get(&(Kind::BranchOffice, Key::Int(id))) {
            Some(Item::BranchOffice(doc)) => Some(&doc.office),
            _ => None,
        }
    }

    fn model(&self, id: i64) -> Option<&Model> {
        match self.items.get(&(Kind::Model, Key::Int(id))) {
            Some(Item::Model(model)) => Some(model.as_ref()),
            _ => None,
        }
    }

    /// The records of `kind`, ids ascending.
    fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Item> {
        self.items
            .range((kind, Key::Int(i64::MIN))..)
            .take_while(move |((k, _), _)| *k == kind)
            .map(|(_, item)| item)
    }

    /// A category as a model repeats it: without its models.
    fn bare_category(&self, reference: &Category) -> Category {
        match self.items.get(&(Kind::Category, Key::Int(reference.id))) {
            Some(Item::Category(category)) => Category {
                models: Vec::new(),
                ..category.clone()
            },
            _ => reference.clone(),
        }
    }

    /// A model as stored and as a car repeats it: with its category.
    fn full_model(&self, model: &Model) -> Model {
        Model {
            category: model
                .category
                .as_ref()
                .map(|category| self.bare_category(category)),
            ..model.clone()
        }
    }

    /// The documents to write: each record with what it repeats from others derived from
    /// them, through [`Stored::record`] (the collections, ids and index entries every writer
    /// uses). Offices first, then categories, models, cars, additionals and tariffs, ids
    /// ascending.
    pub fn records(&self) -> Result<Vec<Record>, serde_json::Error> {
        let mut records = Vec::new();
        for item in self.items.values() {
            let record = match item {
                Item::BranchOffice(doc) => {
                    let office = &doc.office;
                    let places = self
                        .of_kind(Kind::Place)
                        .filter_map(|item| match item {
                            Item::Place(place) if place.branch_office_id == office.id => {
                                Some(Place {
                                    branch_office_name: Some(office.name.clone()),
                                    branch_office_iata_code: office.iata_code.clone(),
                                    ..place.clone()
                                })
                            }
                            _ => None,
                        })
                        .collect();
                    BranchOfficeDoc {
                        office: BranchOffice {
                            places,
                            ..office.clone()
                        },
                        active: doc.active,
                    }
                    .record()?
                }
                Item::Place(_) => continue,
                Item::Category(category) => {
                    let models = self
                        .of_kind(Kind::Model)
                        .filter_map(|item| match item {
                            Item::Model(model)
                                if model.category.as_ref().map(|c| c.id) == Some(category.id) =>
                            {
                                Some(Model {
                                    category: None,
                                    ..model.as_ref().clone()
                                })
                            }
                            _ => None,
                        })
                        .collect();
                    Category {
                        models,
                        ..category.clone()
                    }
                    .record()?
                }
                Item::Model(model) => self.full_model(model).record()?,
                Item::Car(car) => {
                    let model = self
                        .model(car.model.id)
                        .map_or_else(|| car.model.clone(), |model| self.full_model(model));
                    let office = car.current_branch_office_id.and_then(|id| self.office(id));
                    Car {
                        model,
                        current_branch_office: office
                            .map(|office| office.name.clone())
                            .or_else(|| car.current_branch_office.clone()),
                        ..car.as_ref().clone()
                    }
                    .record()?
                }
                Item::Additional(additional) => additional.record()?,
                Item::Tariff(tariff) => tariff.record()?,
            };
            records.push(record);
        }
        Ok(records)
    }

    /// The catalogue as a file of the latest format version: the header, then every record,
    /// kinds in dependency order ([`Kind::ALL`]), ids ascending; `Kind` first, then the other
    /// fields by name.
    pub fn export(&self) -> Result<String, serde_json::Error> {
        write_file(self.items.values())
    }
}

/// A catalogue file of the latest format version that holds `cars` only, each written as
/// [`Catalog::export`] writes a car: its `Model` reduced to the `Id`, its office's name left
/// out. Imported over a catalogue that has their models and offices, it adds the cars.
pub fn cars_file(cars: impl IntoIterator<Item = Car>) -> Result<String, serde_json::Error> {
    let items: Vec<Item> = cars
        .into_iter()
        .map(|car| Item::Car(Box::new(car)))
        .collect();
    write_file(&items)
}

/// The file of `items` in the latest format version: the header, then one line a record,
/// `Kind` first, then the other fields by name.
fn write_file<'a>(items: impl IntoIterator<Item = &'a Item>) -> Result<String, serde_json::Error> {
    let mut out = header_line(Version::LATEST);
    out.push('\n');
    for item in items {
        let fields = serde_json::to_string(&item.fields()?)?;
        let rest = fields.strip_prefix('{').unwrap_or(&fields);
        let separator = if rest == "}" { "" } else { "," };
        out.push_str(&format!(
            "{{\"Kind\":\"{}\"{separator}{rest}\n",
            item.kind()
        ));
    }
    Ok(out)
}

/// The text of a catalogue file: UTF-8, without a byte-order mark if it starts with one.
///
/// Errors: bytes that are not UTF-8, naming the line where they are.
pub fn decode(bytes: &[u8]) -> Result<&str, InvalidCatalog> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let valid = bytes.get(..error.valid_up_to()).unwrap_or_default();
        let line = valid.iter().filter(|byte| **byte == b'\n').count() + 1;
        InvalidCatalog {
            errors: vec![LineError::new(line, "", "is not UTF-8 text")],
        }
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Reads the catalogue file `text` and merges it over `existing` (the tenant's catalogue): a
/// record of the file replaces the record of the same kind and id, the others stay.
///
/// Errors: every problem of the file, each naming its line (and field): the header, a line
/// that is not JSON, an unknown `Kind`, unknown or missing fields, values of the wrong type,
/// the domain rules of each record, an id twice in the file, references to records neither in
/// the file nor in `existing`, and records of `existing` that the file's changes contradict.
pub fn import(text: &str, existing: Catalog) -> Result<Catalog, InvalidCatalog> {
    let fail = |errors| Err(InvalidCatalog { errors });
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line));
    let Some((_, header)) = lines.next() else {
        return fail(vec![LineError::new(
            1,
            "",
            format!(
                "the file is empty; line 1 is the header {}",
                header_line(Version::LATEST)
            ),
        )]);
    };
    let version = match read_header(header) {
        Ok(version) => version,
        Err(error) => return fail(vec![error]),
    };
    let mut errors = Vec::new();
    let mut origin: BTreeMap<(Kind, Key), usize> = BTreeMap::new();
    let mut claimed = BTreeSet::new();
    let mut catalog = existing;
    for (number, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        match read_item(version, number, line) {
            Ok(item) => {
                let key = (item.kind(), item.key());
                if let Some(first) = origin.get(&key) {
                    errors.push(LineError::new(
                        number,
                        "Id",
                        format!("{} {} is already on line {first}", key.0, key.1),
                    ));
                } else {
                    origin.insert(key, number);
                    catalog.insert(item);
                }
            }
            Err((claim, line_errors)) => {
                errors.extend(line_errors);
                claimed.extend(claim);
            }
        }
    }
    let mut reported = BTreeSet::new();
    for (key, item) in &catalog.items {
        for problem in item.check_references(&catalog, &claimed) {
            let error = match (
                origin.get(key),
                problem.other.as_ref().and_then(|other| origin.get(other)),
            ) {
                (Some(&line), _) => LineError::new(line, problem.path, problem.message),
                (None, Some(&line)) => LineError::new(
                    line,
                    "",
                    format!(
                        "{} {} of the tenant's catalogue: {}: {}",
                        key.0, key.1, problem.path, problem.message
                    ),
                ),
                (None, None) => continue,
            };
            if reported.insert((error.line, error.path.clone(), error.message.clone())) {
                errors.push(error);
            }
        }
    }
    if errors.is_empty() {
        Ok(catalog)
    } else {
        errors.sort_by_key(|error| error.line);
        fail(errors)
    }
}

#[cfg(test)]
mod tests;
