//! A transaction a driver has begun, as the drivers that run in the guest's own thread (the
//! Spin adapter, the guest SDK's test host) hold it: its connection and its scope until it
//! commits or is dropped.

use std::cell::RefCell;
use std::rc::Rc;

use crate::{Outcome, Plan, Scope, StoreError};

/// A connection that runs a plan's statements to the plan's end.
pub trait Driver {
    /// Runs `plan`; a statement's failure ends it.
    fn run<T>(&self, plan: Plan<T>) -> Outcome<T>;
}

/// An open transaction on a driver's connection.
#[derive(Debug)]
pub struct OpenTransaction<D> {
    open: RefCell<Option<(Rc<D>, Scope)>>,
}

impl<D: Driver> OpenTransaction<D> {
    /// The transaction `scope` that `driver` has begun.
    pub fn new(driver: Rc<D>, scope: Scope) -> Self {
        Self {
            open: RefCell::new(Some((driver, scope))),
        }
    }

    /// Runs the plan that `build` makes for the transaction; refused once it has ended.
    pub fn run<T>(&self, build: impl FnOnce(&Scope) -> Plan<T>) -> Outcome<T> {
        let open = self.open.borrow();
        let Some((driver, scope)) = open.as_ref() else {
            return Err(StoreError::committed());
        };
        driver.run(build(scope))
    }

    /// Ends the transaction, handing back its driver to commit or roll back on; `None` when it
    /// has ended already.
    pub fn end(&self) -> Option<Rc<D>> {
        self.open.borrow_mut().take().map(|(driver, _)| driver)
    }
}
