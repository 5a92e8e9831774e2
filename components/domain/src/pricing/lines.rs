//! Price lines being written: each total rounded, ids from 1.

use rust_decimal::Decimal;

use super::tariffs::{checked_sum, out_of_range};
use super::texts::LineText;
use super::{PRICE, Payer, PriceItemType, round_money};
use crate::error::ApiError;
use crate::i18n::Language;
use crate::models::{AppliedCoverageBracket, PriceItem, Tariff, TariffBracket};

/// One price line before its id and rounding.
pub(super) struct Line<'a> {
    pub(super) kind: PriceItemType,
    pub(super) type_id: i64,
    pub(super) text: LineText,
    pub(super) unit_price: Decimal,
    pub(super) quantity: i64,
    pub(super) payer: Payer,
    pub(super) tariff: Option<&'a Tariff>,
    pub(super) bracket: Option<&'a TariffBracket>,
}

/// Price lines being written: ids from 1, each total rounded to the currency's minor unit.
pub(super) struct Lines {
    pub(super) minor_units: u32,
    pub(super) items: Vec<PriceItem>,
}

impl Lines {
    /// Appends `line` with `Price` = round(`UnitPrice` x `Quantity`) and returns that price;
    /// a rental line declares its bracket's range with that price. An overflow is blamed on
    /// `field`.
    pub(super) fn push(&mut self, line: Line<'_>, field: &str) -> Result<Decimal, ApiError> {
        let exact = line
            .unit_price
            .checked_mul(Decimal::from(line.quantity))
            .ok_or_else(|| out_of_range(field))?;
        let price = round_money(exact, self.minor_units);
        self.items.push(PriceItem {
            id: self.next_id(),
            is_booking_price: true,
            description: Some(line.text.render(Language::En)),
            price,
            kind: line.kind.code(),
            type_id: line.type_id,
            unit_price: line.unit_price,
            quantity: line.quantity,
            payer: line.payer.code(),
            tariff_name: line.tariff.map(|tariff| tariff.name.clone()),
            applied_coverage_brackets: line.bracket.map(|bracket| {
                vec![AppliedCoverageBracket {
                    days_from: bracket.days_from,
                    days_to: bracket.days_to,
                    amount: price,
                }]
            }),
            text: Some(line.text),
        });
        Ok(price)
    }

    /// Appends every one of `lines` ([`Lines::push`]) and returns their prices.
    pub(super) fn push_all(
        &mut self,
        lines: Vec<Line<'_>>,
        field: &str,
    ) -> Result<Vec<Decimal>, ApiError> {
        lines
            .into_iter()
            .map(|line| self.push(line, field))
            .collect()
    }

    fn next_id(&self) -> i64 {
        i64::try_from(self.items.len()).map_or(i64::MAX, |count| count + 1)
    }
}

/// The sums of `lines` per payer: (customer, agency).
pub(super) fn payer_totals(lines: &[PriceItem]) -> Result<(Decimal, Decimal), ApiError> {
    let total = |payer: Payer| {
        checked_sum(
            lines
                .iter()
                .filter(|line| line.payer == payer.code())
                .map(|line| line.price),
        )
        .ok_or_else(|| out_of_range(PRICE))
    };
    Ok((total(Payer::Customer)?, total(Payer::Agency)?))
}
