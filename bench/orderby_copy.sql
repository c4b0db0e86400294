-- One round of the copy timing (orderby_run.sql): GpuSort on, then off, each between two
-- clock_timestamp() reads; then itself again while rounds are left (round 0 is the warm-up).
SELECT pg_temp.side(true) \g /dev/null
SELECT clock_timestamp() AS t0 \gset
\copy (SELECT * FROM t ORDER BY c) to '/dev/null'
INSERT INTO copy_times VALUES (:copy_round, true, 1000 * extract(epoch FROM clock_timestamp() - :'t0'));
SELECT pg_temp.side(false) \g /dev/null
SELECT clock_timestamp() AS t0 \gset
\copy (SELECT * FROM t ORDER BY c) to '/dev/null'
INSERT INTO copy_times VALUES (:copy_round, false, 1000 * extract(epoch FROM clock_timestamp() - :'t0'));
SELECT :copy_round + 1 AS copy_round, :copy_round + 1 <= :runs AS copy_more \gset
\if :copy_more
\ir orderby_copy.sql
\endif
