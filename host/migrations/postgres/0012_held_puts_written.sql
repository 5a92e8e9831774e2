-- The check at the end of the statement that sends a transaction's held puts (puts answered
-- before they were sent): it fails with a serialization failure, which the store reports as a
-- conflict, unless every put wrote. The check must be the statement's own, not its caller's:
-- the last held puts go to the server together with the transaction's COMMIT, before either
-- is answered, and a failed statement makes that COMMIT a rollback. A caller that counted the
-- rows afterwards would find the transaction committed without one of its writes.

CREATE FUNCTION held_puts_written(written BIGINT, expected BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
BEGIN
    IF written <> expected THEN
        RAISE EXCEPTION 'a held put found its expectation failed (% of % written)', written, expected
            USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN written;
END
$$;
