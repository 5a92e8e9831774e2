//! `AppliedCoverageBrackets` in responses: shown only while the stored lines can be traced
//! back to their day ranges.

use std::collections::BTreeMap;

use super::PriceItemType;
use crate::models::PriceItem;

/// Removes `AppliedCoverageBrackets` from every line: for the simplified response, which never
/// carries it, and for a full response whose lines are not [`coverage_is_traceable`].
pub fn strip_coverage_brackets(lines: &mut [PriceItem]) {
    for line in lines {
        line.applied_coverage_brackets = None;
    }
}

/// Whether stored lines can still be traced back to their day ranges, so that a full response
/// may show `AppliedCoverageBrackets` (interface.md 4.4; otherwise strip it from every line).
///
/// True when no line carries the detail (there is nothing to trace). Otherwise all of:
/// - only rental lines carry it, and every rental line does, as exactly one range
///   (`1 <= DaysFrom <= DaysTo`) whose `Amount` is the line's `Price`;
/// - every line declaring a range has the same payer (several lines of one payer may declare
///   the same range, e.g. an extension; a range shared by two payers cannot be split back);
/// - the ranges declared do not overlap, and the lines of a range charge no more days than it
///   has.
pub fn coverage_is_traceable(lines: &[PriceItem]) -> bool {
    if lines
        .iter()
        .all(|line| line.applied_coverage_brackets.is_none())
    {
        return true;
    }
    // (DaysFrom, DaysTo) -> (payer, days charged).
    let mut ranges: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
    for line in lines {
        let rental = line.kind == PriceItemType::Rental.code();
        let bracket = match (rental, line.applied_coverage_brackets.as_deref()) {
            (false, None) => continue,
            (true, Some([bracket])) => bracket,
            _ => return false,
        };
        if bracket.amount != line.price
            || bracket.days_from < 1
            || bracket.days_to < bracket.days_from
            || line.quantity < 0
        {
            return false;
        }
        let (payer, days) = ranges
            .entry((bracket.days_from, bracket.days_to))
            .or_insert((line.payer, 0));
        if *payer != line.payer {
            return false;
        }
        match days.checked_add(line.quantity) {
            Some(sum) => *days = sum,
            None => return false,
        }
    }
    let mut previous_end = 0;
    for (&(from, to), &(_, days)) in &ranges {
        if from <= previous_end || days > to - from + 1 {
            return false;
        }
        previous_end = to;
    }
    true
}

#[cfg(test)]
mod tests;
