use serde_json::json;

use super::*;

const DOC: &str = include_str!("../../../../docs/catalog.md");

/// The example file of docs/catalog.md.
fn example() -> String {
    let start = DOC.find("```jsonl\n").unwrap() + "```jsonl\n".len();
    let end = start + DOC[start..].find("```").unwrap();
    DOC[start..end].to_owned()
}

/// The example with line `number` (1-based) replaced.
fn with_line(number: usize, line: &str) -> String {
    let mut lines: Vec<String> = example().lines().map(str::to_owned).collect();
    lines[number - 1] = line.to_owned();
    lines.join("\n") + "\n"
}

/// The example's line `number` as JSON, changed by `change`.
fn changed(number: usize, change: impl FnOnce(&mut Map<String, Value>)) -> String {
    let mut value: Value =
        serde_json::from_str(example().lines().nth(number - 1).unwrap()).unwrap();
    change(value.as_object_mut().unwrap());
    with_line(number, &value.to_string())
}

fn errors(text: &str) -> Vec<String> {
    errors_over(text, Catalog::default())
}

fn errors_over(text: &str, existing: Catalog) -> Vec<String> {
    import(text, existing)
        .unwrap_err()
        .errors
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn documents(records: &[Record]) -> Vec<(&str, &str)> {
    records
        .iter()
        .map(|record| (record.collection, record.body.as_str()))
        .collect()
}

fn record(records: &[Record], collection: &str, id: &str) -> Value {
    let record = records
        .iter()
        .find(|r| r.collection == collection && r.id == id)
        .unwrap();
    serde_json::from_str(&record.body).unwrap()
}

#[test]
fn the_documented_example_imports_and_exports_unchanged() {
    let catalog = import(&example(), Catalog::default()).unwrap();
    assert_eq!(catalog.export().unwrap(), example());
    for (kind, count) in [
        (Kind::BranchOffice, 1),
        (Kind::Place, 2),
        (Kind::Category, 1),
        (Kind::Model, 1),
        (Kind::Car, 1),
        (Kind::Additional, 1),
        (Kind::Tariff, 1),
    ] {
        assert_eq!(catalog.count(kind), count, "{kind}");
    }
}

#[test]
fn records_repeat_what_the_api_returns_from_other_records() {
    let records = import(&example(), Catalog::default())
        .unwrap()
        .records()
        .unwrap();
    let collections: Vec<&str> = records.iter().map(|r| r.collection).collect();
    assert_eq!(
        collections,
        [
            "branch-offices",
            "categories",
            "models",
            "cars",
            "additionals",
            "tariffs"
        ]
    );
    let office = record(&records, "branch-offices", "1");
    assert_eq!(office["Active"], json!(true));
    let places = office["Office"]["Places"].as_array().unwrap();
    assert_eq!(places.len(), 2);
    assert_eq!(places[0]["Id"], json!(1));
    assert_eq!(places[0]["BranchOfficeName"], json!("Buenos Aires"));
    assert_eq!(places[1]["BranchOfficeIATACode"], json!("BUE"));

    let category = record(&records, "categories", "1");
    assert_eq!(category["Models"][0]["Id"], json!(1));
    assert_eq!(category["Models"][0]["Category"], Value::Null);
    let model = record(&records, "models", "1");
    assert_eq!(model["Category"]["Name"], json!("Económico"));
    assert_eq!(model["Category"]["Models"], json!([]));
    let car = record(&records, "cars", "AH100CF");
    assert_eq!(car["Model"]["Name"], json!("Fiat Mobi"));
    assert_eq!(car["Model"]["Category"]["Id"], json!(1));
    assert_eq!(car["CurrentBranchOffice"], json!("Buenos Aires"));

    // The index entries are the Stored ones.
    let tariff = records.iter().find(|r| r.collection == "tariffs").unwrap();
    let stored: Tariff = serde_json::from_str(&tariff.body).unwrap();
    assert_eq!(tariff.indexes, stored.indexes());
}

#[test]
fn stored_documents_read_back_to_the_same_catalog() {
    let catalog = import(&example(), Catalog::default()).unwrap();
    let records = catalog.records().unwrap();
    let back = Catalog::from_documents(documents(&records)).unwrap();
    assert_eq!(back.records().unwrap(), records);
    assert_eq!(back.export().unwrap(), example());
    assert!(Catalog::from_documents([("bookings", "{}")]).is_err());
}

#[test]
fn lines_may_come_in_any_order_with_blank_lines_and_crlf() {
    let original = example();
    let lines: Vec<&str> = original.lines().collect();
    let mut text = format!("{}\r\n\r\n", lines[0]);
    for line in lines[1..].iter().rev() {
        text.push_str(line);
        text.push_str("\r\n   \r\n");
    }
    let catalog = import(&text, Catalog::default()).unwrap();
    assert_eq!(catalog.export().unwrap(), original);
}

#[test]
fn a_file_is_utf8_text_with_or_without_a_byte_order_mark() {
    let with_mark = format!("\u{feff}{}", example());
    assert_eq!(decode(with_mark.as_bytes()).unwrap(), example());
    let mut bytes = example().into_bytes();
    let third = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .unwrap()
        .0;
    bytes[third + 5] = 0xFF;
    assert_eq!(
        decode(&bytes).unwrap_err().errors,
        [LineError::new(3, "", "is not UTF-8 text")]
    );
}

#[test]
fn the_header_must_name_a_known_format_and_version() {
    assert_eq!(
        errors(""),
        ["line 1: the file is empty; line 1 is the header \
             {\"Format\":\"rental-catalog\",\"Version\":1}"]
    );
    assert_eq!(
        errors(&with_line(
            1,
            r#"{"Format": "rental-catalog", "Version": 2}"#
        )),
        [
            "line 1: Version: catalogue format version 2 is not supported; \
             this rentald reads version 1"
        ]
    );
    assert_eq!(
        errors(&with_line(1, r#"{"Format": "csv", "Version": 1}"#)),
        ["line 1: Format: is \"csv\", expected \"rental-catalog\""]
    );
    let missing = errors(&with_line(1, r#"{"Format": "rental-catalog"}"#));
    assert!(
        missing[0].starts_with("line 1: missing field `Version`"),
        "{missing:?}"
    );
    // A record first: the header is missing.
    let record_first = errors(example().lines().nth(1).unwrap());
    assert!(record_first[0].starts_with("line 1: "), "{record_first:?}");
    assert_eq!(record_first.len(), 1);
}

#[test]
fn malformed_json_names_its_line_and_column() {
    let text = with_line(4, r#"{"Kind": "Place", "Id": 3,"#);
    assert_eq!(
        errors(&text),
        ["line 4: invalid JSON at column 26: EOF while parsing a value"]
    );
    assert_eq!(
        errors(&with_line(4, "[1, 2]")),
        ["line 4: a line is a JSON object with a Kind"]
    );
}

#[test]
fn an_unknown_or_missing_kind_is_refused() {
    assert_eq!(
        errors(&changed(3, |line| {
            line.insert("Kind".into(), json!("Garage"));
        })),
        [
            "line 3: Kind: unknown kind \"Garage\"; expected one of BranchOffice, Place, \
             Category, Model, Car, Additional, Tariff"
        ]
    );
    assert_eq!(
        errors(&changed(3, |line| {
            line.remove("Kind");
        })),
        ["line 3: Kind: missing field"]
    );
    assert_eq!(
        errors(&changed(3, |line| {
            line.insert("Kind".into(), json!(7));
        })),
        ["line 3: Kind: must be a string, found 7"]
    );
}

#[test]
fn unknown_missing_and_derived_fields_are_named_by_path() {
    assert_eq!(
        errors(&changed(7, |car| {
            car.insert("Colour".into(), json!("Rojo"));
            car.remove("Color");
        })),
        [
            "line 7: Colour: unknown field",
            "line 7: Color: missing field"
        ]
    );
    assert_eq!(
        errors(&changed(3, |place| {
            place.insert("BranchOfficeName".into(), json!("Buenos Aires"));
        })),
        ["line 3: BranchOfficeName: unknown field"]
    );
    assert_eq!(
        errors(&changed(7, |car| {
            car.insert("Model".into(), json!({"Id": 1, "Name": "Fiat Mobi"}));
        })),
        ["line 7: Model.Name: unknown field"]
    );
    assert_eq!(
        errors(&changed(6, |model| {
            model["ModelAttributes"][0]
                .as_object_mut()
                .unwrap()
                .remove("Unit");
        })),
        ["line 6: ModelAttributes[0].Unit: missing field"]
    );
    assert_eq!(
        errors(&changed(2, |office| {
            office.remove("Active");
        })),
        ["line 2: Active: missing field"]
    );
}

#[test]
fn wrong_types_are_named_by_path() {
    assert_eq!(
        errors(&changed(6, |model| {
            model.insert("Doors".into(), json!("five"));
        })),
        ["line 6: Doors: invalid type: string \"five\", expected i64"]
    );
    let text = changed(9, |tariff| {
        tariff["Brackets"][1]["DaysTo"] = json!(true);
    });
    assert_eq!(
        errors(&text),
        ["line 9: Brackets[1].DaysTo: invalid type: boolean `true`, expected i64"]
    );
    let text = changed(2, |office| {
        office.insert("Active".into(), json!("yes"));
    });
    assert_eq!(
        errors(&text),
        ["line 2: Active: invalid type: string \"yes\", expected a boolean"]
    );
}

#[test]
fn an_id_twice_in_the_file_is_refused() {
    let mut text = example();
    text.push_str(example().lines().nth(2).unwrap());
    text.push('\n');
    assert_eq!(errors(&text), ["line 10: Id: Place 1 is already on line 3"]);
}

#[test]
fn references_must_resolve_in_the_file_or_the_tenant() {
    let text = changed(3, |place| {
        place.insert("BranchOfficeId".into(), json!(9));
    });
    assert_eq!(
        errors(&text),
        [
            "line 3: BranchOfficeId: BranchOffice 9 is neither in the file nor in the \
             tenant's catalogue"
        ]
    );
    let text = changed(7, |car| {
        car.insert("Model".into(), json!({"Id": 4}));
        car.insert("CurrentBranchOfficeId".into(), json!(2));
    });
    assert_eq!(
        errors(&text),
        [
            "line 7: Model.Id: Model 4 is neither in the file nor in the tenant's catalogue",
            "line 7: CurrentBranchOfficeId: BranchOffice 2 is neither in the file nor in the \
             tenant's catalogue",
        ]
    );

    // The same car imports over a tenant that has model 4 and office 2.
    let mut existing = import(&example(), Catalog::default()).unwrap();
    let extra = format!(
        "{}\n{}\n{}\n",
        example().lines().next().unwrap(),
        changed(2, |office| {
            office.insert("Id".into(), json!(2));
        })
        .lines()
        .nth(1)
        .unwrap(),
        changed(6, |model| {
            model.insert("Id".into(), json!(4));
            model["ModelAttributes"][0]["ModelId"] = json!(4);
        })
        .lines()
        .nth(5)
        .unwrap(),
    );
    existing = import(&extra, existing).unwrap();
    let merged = import(&text, existing).unwrap();
    assert_eq!(merged.count(Kind::Model), 2);
    assert_eq!(merged.count(Kind::BranchOffice), 2);
}

#[test]
fn a_model_tariff_must_be_of_the_model_category() {
    let text = changed(9, |tariff| {
        tariff.insert("ModelId".into(), json!(1));
        tariff.insert("CategoryId".into(), json!(2));
    });
    let errors = errors(&text);
    assert_eq!(
        errors,
        [
            "line 9: CategoryId: Category 2 is neither in the file nor in the tenant's \
             catalogue",
            "line 9: ModelId: Model 1 is not of Category 2, the tariff's",
        ]
    );
    // A file that moves a model out of the category of a stored tariff of the model.
    let with_model_tariff = changed(9, |tariff| {
        tariff.insert("ModelId".into(), json!(1));
    });
    let existing = import(&with_model_tariff, Catalog::default()).unwrap();
    let header = example().lines().next().unwrap().to_owned();
    let model = changed(6, |model| {
        model.insert("Category".into(), Value::Null);
    });
    let text = format!("{header}\n{}\n", model.lines().nth(5).unwrap());
    assert_eq!(
        errors_over(&text, existing),
        [
            "line 2: Tariff 1 of the tenant's catalogue: ModelId: Model 1 is not of Category 1, \
          the tariff's"
        ]
    );
}

#[test]
fn domain_rules_are_checked() {
    let cases: Vec<(String, &str)> = vec![
        (
            changed(2, |office| {
                office.insert("TimeZone".into(), json!("America/Atlantis"));
            }),
            "line 2: TimeZone: unknown time zone 'America/Atlantis' (an IANA name)",
        ),
        (
            changed(3, |place| {
                place.insert("Latitude".into(), json!(-134.5));
            }),
            "line 3: Latitude: must be between -90 and 90",
        ),
        (
            changed(3, |place| {
                place.insert("Price".into(), json!(-1.50));
            }),
            "line 3: Price: must not be negative",
        ),
        (
            changed(3, |place| {
                place.insert("Id".into(), json!(0));
            }),
            "line 3: Id: must be a positive integer",
        ),
        (
            changed(5, |category| {
                category.insert("Name".into(), json!(" "));
            }),
            "line 5: Name: must not be empty",
        ),
        (
            changed(6, |model| {
                model["ModelAttributes"][0]["ModelId"] = json!(2);
            }),
            "line 6: ModelAttributes[0].ModelId: must be the model's Id, 1",
        ),
        (
            changed(7, |car| {
                car.insert("Id".into(), json!(" AH100CF"));
            }),
            "line 7: Id: must not be empty or start or end with spaces",
        ),
        (
            changed(8, |additional| {
                additional.insert("MaxQuantityPerBooking".into(), json!(0));
            }),
            "line 8: MaxQuantityPerBooking: must be at least 1",
        ),
        (
            changed(9, |tariff| {
                tariff.insert("Currency".into(), json!("usd"));
            }),
            "line 9: Currency: must be a three-letter upper-case currency code, or empty for \
             the tenant's currency setting",
        ),
        (
            changed(9, |tariff| {
                tariff["Brackets"][1]["DaysFrom"] = json!(5);
            }),
            "line 9: Brackets: the tariff has a bracket of days 5 to 7 that does not follow \
             the previous one; brackets must cover day 1 onwards without gap or overlap",
        ),
        (
            changed(9, |tariff| {
                tariff.insert("Brackets".into(), json!([]));
            }),
            "line 9: Brackets: the tariff has no day brackets; brackets must cover day 1 \
             onwards without gap or overlap",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(errors(&text), [expected]);
    }
    // Decimals beyond the currency's minor unit.
    let text = with_line(
        9,
        &example()
            .lines()
            .nth(8)
            .unwrap()
            .replace("\"DailyAmount\":38.00", "\"DailyAmount\":38.005"),
    );
    assert_eq!(
        errors(&text),
        ["line 9: Brackets[0].DailyAmount: has more decimals than USD has (2)"]
    );
}

#[test]
fn every_error_is_reported_in_line_order_and_the_message_is_capped() {
    let header = example().lines().next().unwrap().to_owned();
    let mut text = header.clone() + "\n";
    for _ in 0..60 {
        text.push_str("{\"Kind\": \"Garage\"}\n");
    }
    text.push_str("not json\n");
    let invalid = import(&text, Catalog::default()).unwrap_err();
    assert_eq!(invalid.errors.len(), 61);
    assert!(invalid.errors.windows(2).all(|w| w[0].line < w[1].line));
    let message = invalid.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines[0],
        "the catalogue file has 61 errors, nothing was imported"
    );
    assert_eq!(lines.len(), 1 + MAX_ERRORS + 1);
    assert!(lines[1].starts_with("line 2: Kind: unknown kind"));
    assert_eq!(lines[MAX_ERRORS + 1], "... and 11 more");
}

#[test]
fn a_file_record_replaces_the_tenant_record_and_the_others_stay() {
    let existing = import(&example(), Catalog::default()).unwrap();
    let header = example().lines().next().unwrap().to_owned();
    let renamed = example().replace(
        "\"Name\":\"Buenos Aires\",\"TimeZone\"",
        "\"Name\":\"Capital\",\"TimeZone\"",
    );
    let text = format!("{header}\n{}\n", renamed.lines().nth(1).unwrap());
    let merged = import(&text, existing).unwrap();
    assert_eq!(merged.export().unwrap(), renamed);
    let records = merged.records().unwrap();
    let office = record(&records, "branch-offices", "1");
    assert_eq!(
        office["Office"]["Places"][0]["BranchOfficeName"],
        json!("Capital")
    );
    assert_eq!(
        record(&records, "cars", "AH100CF")["CurrentBranchOffice"],
        json!("Capital")
    );
}

#[cfg(feature = "demo")]
#[test]
fn the_demo_catalog_reads_back_and_round_trips() {
    let now = chrono::DateTime::parse_from_rfc3339("2026-03-15T14:27:31Z")
        .unwrap()
        .to_utc();
    let tenant = crate::demo::demo_tenant(now).unwrap();
    let stored: Vec<Record> = tenant
        .records
        .into_iter()
        .filter(|record| COLLECTIONS.iter().any(|(c, _)| *c == record.collection))
        .collect();
    let catalog = Catalog::from_documents(documents(&stored)).unwrap();
    // What the demo writes is what the catalogue derives (cars in id order).
    let key = |record: &Record| (record.collection, record.id.clone());
    let mut derived = catalog.records().unwrap();
    let mut stored = stored;
    derived.sort_by_key(key);
    stored.sort_by_key(key);
    for (derived, stored) in derived.iter().zip(&stored) {
        assert_eq!(derived, stored);
    }
    assert_eq!(derived.len(), stored.len());
    let exported = catalog.export().unwrap();
    let imported = import(&exported, Catalog::default()).unwrap();
    assert_eq!(imported.records().unwrap(), catalog.records().unwrap());
    assert_eq!(imported.export().unwrap(), exported);
}
