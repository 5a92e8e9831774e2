-- The cars in the fields availability decides on (collection `car-slots`, a view of `cars`,
-- rental_domain::collections::CAR_SLOTS): every write of a car renders its slot, and the cars
-- stored before the view was declared are rendered by whoever opens the database next, as
-- migration 0005 set out.
INSERT INTO views_pending (tenant, collection, id)
SELECT tenant, collection, id FROM documents WHERE collection = 'cars';
