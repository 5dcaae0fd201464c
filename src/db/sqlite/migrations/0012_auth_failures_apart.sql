-- Failed authentications are counted in a file of their own beside the database (src/db/sqlite/authFailures.ts): a
-- write here retires every worker's cached answers, and a flood of wrong passwords must not do that. The counts are
-- short-lived; they start afresh there.
DROP TABLE auth_failures;
