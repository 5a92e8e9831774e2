use super::*;

fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

fn settings() -> BookingSettings {
    BookingSettings::from_lookup("demo", |_| None).unwrap()
}

fn stored(created_by: Option<i64>) -> CustomerDoc {
    CustomerDoc {
        customer: Customer {
            id: 30,
            name: Some("Ana Souza".to_owned()),
            email_address: Some("ana@example.com".to_owned()),
            cell_phone: Some("+55 11 5555-0000".to_owned()),
            ..Customer::default()
        },
        created_by_user_id: created_by,
    }
}

#[test]
fn lookup_by_id_then_global_id() {
    let mut sent = Customer {
        id: 7,
        global_id: Some("abc".to_owned()),
        ..Customer::default()
    };
    assert_eq!(CustomerLookup::of(&sent), CustomerLookup::ById(7));
    sent.id = 0;
    assert_eq!(
        CustomerLookup::of(&sent),
        CustomerLookup::ByGlobalId("abc".to_owned())
    );
    sent.global_id = Some(" ".to_owned());
    assert_eq!(CustomerLookup::of(&sent), CustomerLookup::New);
}

#[test]
fn a_global_id_must_name_exactly_one_customer() {
    assert_eq!(
        single_by_global_id(Vec::<u8>::new()).unwrap_err().code,
        ErrorCode::CustomerNotFound
    );
    assert_eq!(single_by_global_id(vec![4]).unwrap(), 4);
    assert_eq!(
        single_by_global_id(vec![4, 5]).unwrap_err().code,
        ErrorCode::DuplicateCustomerGlobalId
    );
}

#[test]
fn new_customers_need_a_name_and_a_valid_email() {
    let sent = Customer {
        id: 0,
        firstname: Some("Ana".to_owned()),
        lastname: Some("Souza".to_owned()),
        email_address: Some("ana@example.com".to_owned()),
        ..Customer::default()
    };
    let doc = new_customer(&sent, "g".to_owned(), 4).unwrap();
    assert_eq!(doc.customer.id, 0);
    assert_eq!(doc.customer.name.as_deref(), Some("Ana Souza"));
    assert_eq!(doc.customer.global_id.as_deref(), Some("g"));
    assert_eq!(doc.created_by_user_id, Some(4));

    let nameless = Customer {
        lastname: Some("Souza".to_owned()),
        ..Customer::default()
    };
    let error = new_customer(&nameless, "g".to_owned(), 4).unwrap_err();
    assert_eq!(error.code, ErrorCode::CustomerDataNotValid);
    assert_eq!(error.field.as_deref(), Some("Customer.Name"));

    for email in [
        "ana",
        "ana@",
        "@example.com",
        "ana@example",
        "a na@example.com",
        "a@b@c.com",
    ] {
        let bad = Customer {
            name: Some("Ana".to_owned()),
            email_address: Some(email.to_owned()),
            ..Customer::default()
        };
        let error = new_customer(&bad, "g".to_owned(), 4).unwrap_err();
        assert_eq!(
            error.field.as_deref(),
            Some("Customer.EmailAddress"),
            "{email}"
        );
    }
}

#[test]
fn rule_6_only_name_and_email_only_for_the_creator() {
    let sent = Customer {
        id: 30,
        name: Some(" Ana S. Souza ".to_owned()),
        email_address: Some("ana.souza@example.org".to_owned()),
        cell_phone: Some("changed".to_owned()),
        document_id: Some("changed".to_owned()),
        ..Customer::default()
    };
    let changed = contact_changes(&stored(Some(4)), Some(&sent), 4)
        .unwrap()
        .unwrap();
    assert_eq!(changed.name.as_deref(), Some("Ana S. Souza"));
    assert_eq!(
        changed.email_address.as_deref(),
        Some("ana.souza@example.org")
    );
    assert_eq!(changed.cell_phone.as_deref(), Some("+55 11 5555-0000"));
    assert_eq!(changed.document_id, None);

    assert_eq!(
        contact_changes(&stored(Some(4)), Some(&sent), 5).unwrap(),
        None
    );
    assert_eq!(
        contact_changes(&stored(None), Some(&sent), 4).unwrap(),
        None
    );
    assert_eq!(contact_changes(&stored(Some(4)), None, 4).unwrap(), None);
    let same = Customer {
        name: Some("Ana Souza".to_owned()),
        ..Customer::default()
    };
    assert_eq!(
        contact_changes(&stored(Some(4)), Some(&same), 4).unwrap(),
        None
    );

    let blank = Customer {
        name: Some("  ".to_owned()),
        ..Customer::default()
    };
    assert_eq!(
        contact_changes(&stored(Some(4)), Some(&blank), 4)
            .unwrap_err()
            .code,
        ErrorCode::CustomerDataNotValid
    );
    // Another user's invalid data is ignored, not refused.
    assert_eq!(
        contact_changes(&stored(Some(4)), Some(&blank), 5).unwrap(),
        None
    );
}

#[test]
fn ages_from_the_birth_date_at_the_start() {
    let customer = Customer {
        birth_date: Some(at("2000-06-15T00:00:00Z")),
        age: Some(99),
        ..Customer::default()
    };
    assert_eq!(age_at(&customer, at("2025-06-14T23:00:00Z")), Some(24));
    assert_eq!(age_at(&customer, at("2025-06-15T08:00:00Z")), Some(25));
    let stored_age = Customer {
        age: Some(30),
        ..Customer::default()
    };
    assert_eq!(age_at(&stored_age, at("2025-06-14T23:00:00Z")), Some(30));
    assert_eq!(
        age_at(&Customer::default(), at("2025-06-14T23:00:00Z")),
        None
    );
}

#[test]
fn blocked_customers_and_driver_ages() {
    let start = at("2025-06-15T10:00:00Z");
    let customer = Customer {
        id: 3,
        age: Some(20),
        ..Customer::default()
    };
    assert!(check_may_book(&customer, &settings(), start).is_ok());
    let mut strict = settings();
    strict.min_driver_age = Some(21);
    assert_eq!(
        check_may_book(&customer, &strict, start).unwrap_err().code,
        ErrorCode::DriverAgeNotAllowed
    );
    let mut capped = settings();
    capped.max_driver_age = Some(19);
    assert_eq!(
        check_may_book(&customer, &capped, start).unwrap_err().code,
        ErrorCode::DriverAgeNotAllowed
    );
    let mut blocked = settings();
    blocked.blocked_customers.insert(3);
    assert_eq!(
        check_may_book(&customer, &blocked, start).unwrap_err().code,
        ErrorCode::BlockedCustomerToBook
    );
    let unknown_age = Customer {
        id: 4,
        ..Customer::default()
    };
    assert!(check_may_book(&unknown_age, &strict, start).is_ok());
}

#[test]
fn uuids_are_version_4() {
    let uuid = uuid_v4([0xFF; 16]);
    assert_eq!(uuid, "ffffffff-ffff-4fff-bfff-ffffffffffff");
    assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
}
