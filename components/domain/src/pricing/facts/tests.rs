use super::*;
use crate::pricing::fixtures::*;
use crate::pricing::*;

#[test]
fn local_times_are_read_on_each_office_clock() {
    // 10:30Z is 07:30 in Buenos Aires and 11:30 in Madrid (CET, winter).
    let from = at("2026-03-02T10:30:00Z");
    let to = at("2026-03-05T19:00:00-03:00");
    let times = LocalTimes::at_offices(
        from,
        to,
        chrono_tz::America::Argentina::Buenos_Aires,
        chrono_tz::Europe::Madrid,
    );
    assert_eq!(times.pickup, time("07:30"));
    // 19:00 -03:00 is 22:00Z, 23:00 in Madrid.
    assert_eq!(times.dropoff, time("23:00"));
    assert!(!OfficeHours::default().contains(times.pickup));
}

#[test]
fn office_zone_falls_back_to_the_tenant_zone() {
    let mut office = BranchOffice {
        time_zone: Some("America/Argentina/Cordoba".to_owned()),
        ..BranchOffice::default()
    };
    assert_eq!(
        office_zone(&office, Tz::UTC),
        chrono_tz::America::Argentina::Cordoba
    );
    office.time_zone = Some("Mars/Olympus".to_owned());
    assert_eq!(office_zone(&office, Tz::Europe__Madrid), Tz::Europe__Madrid);
    office.time_zone = None;
    assert_eq!(office_zone(&office, Tz::UTC), Tz::UTC);
}

#[test]
fn a_driver_is_young_until_the_25th_birthday_on_the_pick_up_day() {
    let zone = chrono_tz::America::Argentina::Buenos_Aires;
    let birth = NaiveDate::from_ymd_opt(2001, 3, 10).unwrap();
    // 25 on 2026-03-10 in Buenos Aires.
    assert!(is_young_driver(
        birth,
        at("2026-03-09T23:59:00-03:00"),
        zone
    ));
    assert!(!is_young_driver(
        birth,
        at("2026-03-10T00:00:00-03:00"),
        zone
    ));
    // 02:00Z on the 10th is still the 9th in Buenos Aires.
    assert!(is_young_driver(birth, at("2026-03-10T02:00:00Z"), zone));
    assert!(!is_young_driver(birth, at("2040-01-01T00:00:00Z"), zone));
}

#[test]
fn office_hours_parse_and_print() {
    let hours = OfficeHours::parse("07:30-19:45").unwrap();
    assert_eq!(hours.open(), time("07:30"));
    assert_eq!(hours.close(), time("19:45"));
    assert_eq!(hours.to_string(), "07:30-19:45");
    assert_eq!(OfficeHours::parse("10:00-10:00"), None);
    assert_eq!(OfficeHours::new(time("10:00"), time("09:00")), None);
}
