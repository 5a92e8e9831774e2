use super::*;
use crate::pricing::fixtures::*;

#[test]
fn no_settings_are_the_defaults() {
    let settings = settings_from(&[]).unwrap();
    assert_eq!(settings, PricingSettings::default());
    assert_eq!(settings.grace_minutes, 59);
    assert_eq!(settings.office_hours.to_string(), "08:00-20:00");
    assert_eq!(settings.surcharges, Surcharges::default());
    assert_eq!(settings.currency, None);
    // Blank values are not set.
    assert_eq!(
        settings_from(&[("grace_minutes", " "), ("surcharge.one_way", "")]).unwrap(),
        settings
    );
}

#[test]
fn every_setting_is_read() {
    let settings = settings_from(&[
        ("grace_minutes", "30"),
        ("currency", "ars"),
        ("office_hours", "09:00 - 18:30"),
        ("surcharge.one_way", "40"),
        ("surcharge.out_of_hours", "15.50"),
        ("surcharge.young_driver", "6.00"),
    ])
    .unwrap();
    assert_eq!(
        settings,
        PricingSettings {
            grace_minutes: 30,
            currency: Some("ARS".to_owned()),
            office_hours: OfficeHours::new(time("09:00"), time("18:30")).unwrap(),
            surcharges: Surcharges {
                one_way: d("40"),
                out_of_hours: d("15.50"),
                young_driver: d("6.00"),
            },
        }
    );
}

#[test]
fn invalid_settings_name_the_setting_and_are_error_105() {
    for (key, value) in [
        ("grace_minutes", "-1"),
        ("grace_minutes", "1440"),
        ("grace_minutes", "an hour"),
        ("currency", "dollars"),
        ("office_hours", "20:00-08:00"),
        ("office_hours", "08:00"),
        ("office_hours", "8am-8pm"),
        ("surcharge.one_way", "-5"),
        ("surcharge.out_of_hours", "free"),
        ("surcharge.young_driver", "6,00"),
    ] {
        let error = settings_from(&[(key, value)]).unwrap_err();
        assert_eq!(error.key, key, "{value}");
        let error = ApiError::from(error);
        assert_eq!(error.code, ErrorCode::SettingNotFound);
        assert_eq!(error.code.code(), 105);
        assert_eq!(error.field.as_deref(), Some(key));
    }
    assert!(settings_from(&[("grace_minutes", "1439")]).is_ok());
    assert!(settings_from(&[("grace_minutes", "0")]).is_ok());
}

#[test]
fn grace_from_settings_applies_to_rental_days() {
    let settings = settings_from(&[("grace_minutes", "120")]).unwrap();
    let mut fixture = Fixture::new();
    fixture.to += TimeDelta::minutes(90);
    assert_eq!(fixture.quote().unwrap().total_days, 4, "default grace 59");
    fixture.settings = settings;
    assert_eq!(fixture.quote().unwrap().total_days, 3, "grace 120");
}
