//! The texts pricing writes for a person, in every response language: a price line's
//! `Description` and a booking's `TotalDaysString`.
//!
//! A line keeps what its description says as a [`LineText`] (stored with the booking), and a
//! response writes it in the request's language ([`localize`]), so that one booking reads in
//! English, Spanish or Portuguese alike. Names from the catalogue (tariffs, additionals,
//! places) are written as the catalogue has them.

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::{Deserialize, Serialize};

use crate::i18n::Language;
use crate::models::PriceItem;

/// What a price line's description says, before it is written in a language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "Kind")]
pub enum LineText {
    /// Rental days `from` to `to` (one day when equal) of a tariff.
    Rental { tariff: String, from: i64, to: i64 },
    /// An additional taken `quantity` times, for `days` rental days when priced by day.
    Additional {
        name: String,
        quantity: i64,
        days: Option<i64>,
    },
    /// The price of delivering the car at a place.
    Delivery { place: String },
    /// The price of returning the car at a place.
    Return { place: String },
    /// The car is returned to another branch office.
    OneWay,
    /// A pick-up (or a return) at `time` (`HH:MM`), outside the office `hours`.
    OutOfHours {
        pickup: bool,
        time: String,
        hours: String,
    },
    /// A driver under the young-driver age, for `days` rental days.
    YoungDriver { days: i64 },
    /// The difference between the price sent and the computed one.
    Adjustment,
    /// A tenant's own line ([`super::Adjustment`]), in the tenant's words.
    Tenant(Translations),
}

/// A text a tenant writes in each language the platform answers in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Translations {
    pub en: String,
    pub es: String,
    pub pt: String,
}

impl Translations {
    /// The text in `language`.
    pub fn get(&self, language: Language) -> &str {
        match language {
            Language::En => &self.en,
            Language::Es => &self.es,
            Language::Pt => &self.pt,
        }
    }
}

impl LineText {
    /// The description in `language`.
    pub fn render(&self, language: Language) -> String {
        use Language::{En, Es, Pt};
        match self {
            LineText::Rental { tariff, from, to } if from == to => match language {
                En => format!("{tariff}: day {to}"),
                Es => format!("{tariff}: día {to}"),
                Pt => format!("{tariff}: dia {to}"),
            },
            LineText::Rental { tariff, from, to } => match language {
                En => format!("{tariff}: days {from} to {to}"),
                Es => format!("{tariff}: días {from} a {to}"),
                Pt => format!("{tariff}: dias {from} a {to}"),
            },
            LineText::Additional {
                name,
                quantity,
                days: None,
            } => format!("{name} x{quantity}"),
            LineText::Additional {
                name,
                quantity,
                days: Some(days),
            } => format!("{name} x{quantity}, {}", total_days_text(*days, language)),
            LineText::Delivery { place } => match language {
                En => format!("Delivery at {place}"),
                Es => format!("Entrega en {place}"),
                Pt => format!("Entrega em {place}"),
            },
            LineText::Return { place } => match language {
                En => format!("Return at {place}"),
                Es => format!("Devolución en {place}"),
                Pt => format!("Devolução em {place}"),
            },
            LineText::OneWay => match language {
                En => "One-way surcharge",
                Es => "Recargo por devolución en otra sucursal",
                Pt => "Taxa de devolução em outra filial",
            }
            .to_owned(),
            LineText::OutOfHours {
                pickup,
                time,
                hours,
            } => match (language, pickup) {
                (En, true) => {
                    format!("Out-of-hours surcharge: pick-up at {time} (office hours {hours})")
                }
                (En, false) => {
                    format!("Out-of-hours surcharge: return at {time} (office hours {hours})")
                }
                (Es, true) => format!(
                    "Recargo fuera de horario: retiro a las {time} (horario de atención {hours})"
                ),
                (Es, false) => format!(
                    "Recargo fuera de horario: devolución a las {time} (horario de atención {hours})"
                ),
                (Pt, true) => format!(
                    "Taxa fora do horário: retirada às {time} (horário de atendimento {hours})"
                ),
                (Pt, false) => format!(
                    "Taxa fora do horário: devolução às {time} (horário de atendimento {hours})"
                ),
            },
            LineText::YoungDriver { days } => {
                let days = total_days_text(*days, language);
                match language {
                    En => format!("Young driver surcharge, {days}"),
                    Es => format!("Recargo por conductor joven, {days}"),
                    Pt => format!("Taxa de condutor jovem, {days}"),
                }
            }
            LineText::Adjustment => match language {
                En => "Adjustment to the price sent",
                Es => "Ajuste al precio enviado",
                Pt => "Ajuste ao preço enviado",
            }
            .to_owned(),
            LineText::Tenant(text) => text.get(language).to_owned(),
        }
    }
}

/// `TotalDaysString` in `language`: `1 day`, `3 days`; `1 día`, `3 días`; `1 dia`, `3 dias`.
pub fn total_days_text(days: i64, language: Language) -> String {
    let (one, many) = match language {
        Language::En => ("day", "days"),
        Language::Es => ("día", "días"),
        Language::Pt => ("dia", "dias"),
    };
    format!("{days} {}", if days == 1 { one } else { many })
}

/// Writes price lines for a response in `language`: each line that keeps its [`LineText`]
/// gets its `Description` in that language and no longer carries the text (which is for
/// storage only). A line without one (written before lines kept it) keeps its stored
/// description.
pub fn localize(lines: &mut [PriceItem], language: Language) {
    for line in lines {
        if let Some(text) = line.text.take() {
            line.description = Some(text.render(language));
        }
    }
}

/// `TotalDaysString` of a booking of `total_days` in `language`, when the days are a whole
/// number (they always are for a priced booking).
pub fn total_days_string(total_days: Decimal, language: Language) -> Option<String> {
    total_days
        .is_integer()
        .then(|| total_days.to_i64())
        .flatten()
        .map(|days| total_days_text(days, language))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_language(text: &LineText) -> [String; 3] {
        Language::ALL.map(|language| text.render(language))
    }

    #[test]
    fn every_line_reads_in_every_language() {
        let texts = [
            LineText::Rental {
                tariff: "Compacto".into(),
                from: 1,
                to: 3,
            },
            LineText::Rental {
                tariff: "Compacto".into(),
                from: 4,
                to: 4,
            },
            LineText::Delivery {
                place: "Aeroparque".into(),
            },
            LineText::Return {
                place: "Aeroparque".into(),
            },
            LineText::OneWay,
            LineText::OutOfHours {
                pickup: true,
                time: "23:00".into(),
                hours: "08:00-20:00".into(),
            },
            LineText::OutOfHours {
                pickup: false,
                time: "06:00".into(),
                hours: "08:00-20:00".into(),
            },
            LineText::YoungDriver { days: 3 },
            LineText::Adjustment,
        ];
        for text in &texts {
            let [en, es, pt] = every_language(text);
            assert!(
                en != es && es != pt && en != pt,
                "{text:?}: {en} / {es} / {pt}"
            );
        }
        assert_eq!(
            every_language(&texts[0]),
            [
                "Compacto: days 1 to 3",
                "Compacto: días 1 a 3",
                "Compacto: dias 1 a 3"
            ]
        );
        assert_eq!(every_language(&texts[1])[1], "Compacto: día 4");
        let by_day = LineText::Additional {
            name: "GPS".into(),
            quantity: 1,
            days: Some(3),
        };
        assert_eq!(
            every_language(&by_day),
            ["GPS x1, 3 days", "GPS x1, 3 días", "GPS x1, 3 dias"]
        );
    }

    #[test]
    fn total_days_in_every_language() {
        assert_eq!(total_days_text(1, Language::En), "1 day");
        assert_eq!(total_days_text(3, Language::En), "3 days");
        assert_eq!(total_days_text(1, Language::Es), "1 día");
        assert_eq!(total_days_text(3, Language::Pt), "3 dias");
        assert_eq!(
            total_days_string(Decimal::new(30, 1), Language::Es).as_deref(),
            Some("3 días")
        );
        assert_eq!(total_days_string(Decimal::new(25, 1), Language::Es), None);
    }

    #[test]
    fn localized_lines_drop_their_text() {
        let mut lines = [
            PriceItem {
                description: Some("Adjustment to the price sent".into()),
                text: Some(LineText::Adjustment),
                ..PriceItem::default()
            },
            PriceItem {
                description: Some("Written before lines kept their text".into()),
                ..PriceItem::default()
            },
        ];
        localize(&mut lines, Language::Pt);
        assert_eq!(
            lines[0].description.as_deref(),
            Some("Ajuste ao preço enviado")
        );
        assert_eq!(lines[0].text, None);
        assert_eq!(
            lines[1].description.as_deref(),
            Some("Written before lines kept their text")
        );
        let written = serde_json::to_value(&lines[0]).unwrap();
        assert!(written.get("Text").is_none(), "{written}");
    }
}
