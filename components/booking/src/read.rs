//! `GET /api/booking/{id}` and `GET /api/booking/{id}/history`.

use rental_domain::booking::response;
use rental_domain::collections::booking_comments;
use rental_domain::{Booking, BookingComment, KeyPart};
use rental_guest::store::{Mode, Range, Transaction};
use rental_guest::{Error, Response, context, json, path_id, retry_on_conflict};

/// `GET /api/booking/{id}`: the full booking; 404 with no body when the tenant has no booking
/// with that Id (or the segment is no Id).
pub fn booking(id: &str) -> Result<Response, Error> {
    let Some(id) = path_id(id) else {
        return Ok(Response::not_found());
    };
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        tx.get::<Booking>(&id.to_string())
    })?;
    Ok(match booking {
        Some(document) => json(200, &response::full(document.value, context::language())),
        None => Response::not_found(),
    })
}

/// `GET /api/booking/{id}/history`: the comments recorded on the booking, oldest first; 404
/// with no body when there is no such booking.
pub fn history(id: &str) -> Result<Response, Error> {
    let Some(id) = path_id(id) else {
        return Ok(Response::not_found());
    };
    let comments = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        if tx.get::<Booking>(&id.to_string())?.is_none() {
            return Ok(None);
        }
        let comments = tx.scan_all(&Range::<BookingComment>::prefix(
            booking_comments::BY_BOOKING,
            vec![KeyPart::Int(id)],
        ))?;
        Ok::<_, Error>(Some(
            comments
                .into_iter()
                .map(|document| document.value)
                .collect::<Vec<_>>(),
        ))
    })?;
    Ok(match comments {
        Some(comments) => json(200, &comments),
        None => Response::not_found(),
    })
}
