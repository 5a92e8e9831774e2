//! A component that misbehaves on request (query `behave`), installed in place of `listing` by
//! the sandbox tests:
//!
//! - `loop`: never returns;
//! - `alloc`: allocates until the memory limit stops it;
//! - `recurse`: recurses until the stack limit stops it;
//! - `panic`: panics;
//! - `flood`: answers with a 16 MiB body;
//! - `keep`: has the host keep the tenant's booking list (`scan-kept`) over and over, about
//!   a hundred times what a request may keep, then answers 200 with how many it kept;
//! - `hold-write`: begins a read-write transaction, writes (takes a sequence's next value, which
//!   is what makes it hold the write) and never returns;
//! - `hold-read`: begins a read-only transaction, reads (which is what makes it hold a
//!   snapshot of the database) and never returns;
//! - `write-work`: as `hold-write`, but computes for a fixed number of steps (about a quarter
//!   of a second at full speed), then commits and answers 200;
//! - `remember`: answers what the previous request left in a static, then leaves its own
//!   tenant there: a fresh instance must always answer `""`;
//! - `commit-then-write`: takes a sequence's next value and commits, then does so again in a
//!   second transaction, and answers both values;
//! - `commit-then-panic`: takes a sequence's next value, commits, then panics;
//! - anything else: answers 200 with the tenant it was given and how many bookings its store
//!   shows, so a test can see that a store is bound to the request's tenant.

use std::sync::{Mutex, PoisonError};

use rental_domain::collections::BOOKING_ITEMS;
use rental_domain::models::Booking;
use rental_guest::store::{Mode, Range, Transaction};
use rental_guest::{Error, Handler, Request, Response, context, json};

struct Hostile;

/// The steps of `write-work`: about a quarter of a second of one core.
const WRITE_WORK_STEPS: u64 = 1 << 28;

/// The scans of `keep`: of the demo's 124 bookings, a few hundred MiB.
const KEEP_ROUNDS: usize = 2_000;

/// What the previous request of this instance left (see `remember`).
static LEFT: Mutex<String> = Mutex::new(String::new());

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    let frame = [depth; 64];
    std::hint::black_box(&frame);
    recurse(depth + 1) + frame[0]
}

/// A read-write transaction that has written, and so holds what a writer holds.
fn writing() -> Result<Transaction, Error> {
    let tx = Transaction::begin(Mode::ReadWrite)?;
    tx.next_id("hostile")?;
    Ok(tx)
}

impl Handler for Hostile {
    fn handle(request: Request) -> Result<Response, Error> {
        Ok(match request.query("behave") {
            Some("loop") => loop {
                std::hint::spin_loop();
            },
            Some("hold-write") => {
                let _held = writing()?;
                loop {
                    std::hint::spin_loop();
                }
            }
            Some("hold-read") => {
                let reading = Transaction::begin(Mode::ReadOnly)?;
                reading.count(&Range::<Booking>::all("id"))?;
                loop {
                    std::hint::spin_loop();
                }
            }
            Some("write-work") => {
                let tx = writing()?;
                let mut x: u64 = 1;
                for _ in 0..WRITE_WORK_STEPS {
                    x = std::hint::black_box(
                        x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1),
                    );
                }
                tx.commit()?;
                json(200, &x)
            }
            Some("commit-then-write") => {
                let next = || -> Result<i64, Error> {
                    let tx = Transaction::begin(Mode::ReadWrite)?;
                    let value = tx.next_id("hostile")?;
                    tx.commit()?;
                    Ok(value)
                };
                let first = next()?;
                json(
                    200,
                    &serde_json::json!({ "first": first, "second": next()? }),
                )
            }
            Some("commit-then-panic") => {
                writing()?.commit()?;
                panic!("asked to panic after committing")
            }
            Some("alloc") => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            Some("recurse") => json(200, &recurse(0)),
            Some("panic") => panic!("asked to panic"),
            Some("flood") => Response::new(200).with_body(vec![b'x'; 16 << 20]),
            Some("keep") => {
                let tx = Transaction::begin(Mode::ReadOnly)?;
                let bookings = Range::<Booking>::all("id").scan();
                let mut kept = 0;
                for _ in 0..KEEP_ROUNDS {
                    kept += tx.scan_view_kept(&BOOKING_ITEMS, &bookings)?.len();
                }
                json(200, &kept)
            }
            Some("remember") => {
                let mut left = LEFT.lock().unwrap_or_else(PoisonError::into_inner);
                let previous = std::mem::replace(&mut *left, context::tenant());
                json(200, &serde_json::json!({ "found": previous }))
            }
            _ => {
                let bookings = Transaction::begin(Mode::ReadOnly)
                    .and_then(|tx| tx.count(&Range::<Booking>::all("id")));
                match bookings {
                    Ok(count) => json(
                        200,
                        &serde_json::json!({ "tenant": context::tenant(), "bookings": count }),
                    ),
                    Err(e) => json(500, &serde_json::json!({ "error": format!("{e:?}") })),
                }
            }
        })
    }
}

rental_guest::export_handler!(Hostile);
