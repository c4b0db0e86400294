-- test/sqlsmith.sql: the database test/sqlsmith.sh points sqlsmith at, loaded the same way into
-- the server with gpuext and the one without.  Tables with every type gpuext sorts or aggregates
-- (smallint, integer, bigint, real, double precision, numeric with and without typmod, date,
-- timestamp, timestamptz) and the types that come beside them as GROUP BY or sort keys (text,
-- varchar, char, boolean, uuid, interval), holding NULLs, NaN, -NaN, infinities, -0, the extremes
-- of each type, huge and tiny numerics and infinite dates and timestamps.  sqlsmith writes no
-- GROUP BY and no ORDER BY (only window functions, aggregates in scalar subqueries and, rarely,
-- DISTINCT), so views bring them: GROUP BY over one table (GpuAgg's case), ORDER BY, DISTINCT.
-- Each view orders its rows completely, as sqlsmith reads views with LIMIT and OFFSET and no
-- ORDER BY of its own: an order left to the plan would pick other rows with gpuext than without.
-- The data come from random() after setseed, so both servers get the same rows in the same pages.
-- Queries run as the role smith, no superuser: sqlsmith calls any function with any arguments.
SET client_min_messages = warning;
SELECT setseed(0.34);

-- v, or with probability pn a NULL, or with probability ps one of specials.
CREATE FUNCTION pg_temp.mix(v anyelement, specials anyarray, pn float8, ps float8)
RETURNS anyelement LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN r < pn THEN NULL
		WHEN r < pn + ps THEN specials[1 + floor(random() * cardinality(specials))::int]
		ELSE v END
	FROM (SELECT random() AS r) s
$$;

CREATE TABLE t_big (
	k integer PRIMARY KEY,
	i2 smallint,
	i4 integer,
	i8 bigint,
	f4 real,
	f8 double precision,
	n numeric,
	nt numeric(12, 4),
	d date,
	ts timestamp,
	tz timestamptz,
	t text,
	v varchar(8),
	c char(3),
	b boolean,
	u uuid,
	iv interval
);

-- n rows into table tab, NULLs with probability pn and special values with probability ps.
CREATE FUNCTION pg_temp.fill(tab regclass, first int, n int, pn float8, ps float8) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format($q$
	INSERT INTO %s
	SELECT g,
		pg_temp.mix((floor(random() * 41) - 20)::int2, '{-32768,32767,0,-1}'::int2[], %2$s, %3$s),
		pg_temp.mix((floor(random() * 1000) - 500)::int4, '{-2147483648,2147483647,0}'::int4[], %2$s, %3$s),
		pg_temp.mix((floor(random() * 2000) - 1000)::int8 * 1000003,
			'{-9223372036854775808,9223372036854775807,0}'::int8[], %2$s, %3$s),
		pg_temp.mix((round(random() * 200 - 100) / 4)::real,
			'{NaN,-NaN,Infinity,-Infinity,-0,0,3.4028235e38,-3.4028235e38,1.1754944e-38,1e-45}'::real[], %2$s, %3$s),
		pg_temp.mix(CASE WHEN random() < 0.5 THEN round(random() * 100) ELSE (random() - 0.5) * 1e6 END,
			'{NaN,-NaN,Infinity,-Infinity,-0,0,1.7976931348623157e308,-1.7976931348623157e308,2.2250738585072014e-308,5e-324}'::float8[],
			%2$s, %3$s),
		pg_temp.mix(round(((random() - 0.5) * 1e4)::numeric, floor(random() * 6)::int),
			'{NaN,Infinity,-Infinity,0,-0.000,1e1000,-1e1000,1e-1000,123456789012345678901234567890123456789.123456789,99999999999999999999999999999999999999,0.00000000000000000001}'::numeric[],
			%2$s, %3$s),
		pg_temp.mix(round(((random() - 0.5) * 1e5)::numeric, floor(random() * 5)::int),
			'{NaN,0,99999999.9999,-99999999.9999,0.0001}'::numeric[], %2$s, %3$s),
		pg_temp.mix('2000-01-01'::date + floor((random() - 0.5) * 2000)::int,
			'{infinity,-infinity,4713-01-01 BC,5874897-12-31,1970-01-01}'::date[], %2$s, %3$s),
		pg_temp.mix(date_trunc('hour', '2000-01-01'::timestamp + (random() - 0.5) * interval '2000 days'),
			'{infinity,-infinity,4713-01-01 00:00:00 BC,294276-12-31 23:59:59.999999,1970-01-01}'::timestamp[], %2$s, %3$s),
		pg_temp.mix('2000-01-01 00:00+00'::timestamptz + (random() - 0.5) * interval '2000 days',
			'{infinity,-infinity,4713-01-01 00:00:00+00 BC,294276-12-31 23:59:59.999999+00,1970-01-01 00:00+00}'::timestamptz[],
			%2$s, %3$s),
		pg_temp.mix(chr(97 + floor(random() * 5)::int) || floor(random() * 20),
			ARRAY['', ' ', 'A', 'ß', 'NaN', repeat('long', 600)], %2$s, %3$s),
		pg_temp.mix(left(md5(floor(random() * 30)::text), 8)::varchar(8), '{"",ZZZZZZZZ}'::varchar(8)[], %2$s, %3$s),
		pg_temp.mix(chr(65 + floor(random() * 4)::int)::char(3), '{"   ","a"}'::char(3)[], %2$s, %3$s),
		pg_temp.mix(random() < 0.5, '{true,false}'::bool[], %2$s, %3$s),
		pg_temp.mix(('00000000-0000-0000-0000-0000000000' || lpad(floor(random() * 20)::text, 2, '0'))::uuid,
			'{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff}'::uuid[], %2$s, %3$s),
		pg_temp.mix(make_interval(days => floor(random() * 40)::int),
			'{178000000 years,-178000000 years,00:00:00,1 mon,30 days}'::interval[], %2$s, %3$s)
	FROM generate_series(%4$s, %5$s) g
	$q$, tab, pn, ps, first, first + n - 1);
END
$$;

CREATE TABLE t_mid (LIKE t_big);
CREATE TABLE t_small (LIKE t_big);
CREATE TABLE t_edge (LIKE t_big);
CREATE TABLE t_empty (LIKE t_big);
CREATE TABLE t_part (LIKE t_big) PARTITION BY RANGE (i4);
CREATE TABLE t_part_lo PARTITION OF t_part FOR VALUES FROM (MINVALUE) TO (0);
CREATE TABLE t_part_hi PARTITION OF t_part FOR VALUES FROM (0) TO (MAXVALUE);
CREATE TABLE t_part_null PARTITION OF t_part DEFAULT;
SELECT pg_temp.fill('t_big', 1, 6000, 0.04, 0.06);
SELECT pg_temp.fill('t_mid', 1, 600, 0.05, 0.1);
SELECT pg_temp.fill('t_small', 1, 40, 0.1, 0.2);
SELECT pg_temp.fill('t_edge', 1, 64, 0.2, 0.8);
SELECT pg_temp.fill('t_part', 1, 1000, 0.05, 0.1);
-- A row of NULLs only.
INSERT INTO t_edge (k) VALUES (0);
CREATE INDEX ON t_big (i4);
CREATE INDEX ON t_mid (ts);

-- Long and narrow: more rows for the aggregates' batches.
CREATE TABLE t_long (id integer, g integer, x double precision, y numeric, z bigint, w date);
INSERT INTO t_long
SELECT i, floor(random() * 100), pg_temp.mix(random() * 1000, '{NaN,Infinity,-0}'::float8[], 0.01, 0.01),
	pg_temp.mix(round((random() * 1e6)::numeric, 3), '{NaN,1e100,-1e-100}'::numeric[], 0.01, 0.01),
	pg_temp.mix(floor(random() * 1e12)::int8, '{9223372036854775807,-9223372036854775808}'::int8[], 0.01, 0.001),
	'2020-01-01'::date + floor(random() * 3000)::int
FROM generate_series(1, 30000) i;

-- Aggregates with GROUP BY over one table (GpuAgg's case): keys of many types, expressions,
-- FILTER, HAVING, and one without GROUP BY.
CREATE VIEW v_agg_i4 AS
	SELECT i4 % 10 AS g, count(*) AS cnt, count(f8) AS cnt_f8, sum(i2) AS s_i2, sum(i4) AS s_i4,
		sum(i8) AS s_i8, sum(f4) AS s_f4, sum(f8) AS s_f8, sum(n) AS s_n, sum(nt) AS s_nt,
		avg(i8) AS a_i8, avg(f8) AS a_f8, avg(n) AS a_n, min(d) AS min_d, max(d) AS max_d,
		min(ts) AS min_ts, max(tz) AS max_tz, min(f4) AS min_f4, max(n) AS max_n
	FROM t_big GROUP BY i4 % 10 ORDER BY g;
CREATE VIEW v_agg_text AS
	SELECT t, b, count(*) AS cnt, sum(i4) AS s_i4, avg(nt) AS a_nt, max(f8) AS max_f8,
		min(n) AS min_n, sum(f8) FILTER (WHERE b) AS s_f8_b
	FROM t_big GROUP BY t, b HAVING count(*) > 1 ORDER BY t, b;
CREATE VIEW v_agg_keys AS
	SELECT f8, n, d, u, count(*) AS cnt, sum(i2) AS s_i2, max(ts) AS max_ts, avg(f4) AS a_f4
	FROM t_mid GROUP BY f8, n, d, u ORDER BY f8, n, d, u;
CREATE VIEW v_agg_misc AS
	SELECT c, v, iv, i2, count(i8) AS cnt, sum(i8) AS s_i8, min(tz) AS min_tz, avg(i4) AS a_i4
	FROM t_big GROUP BY c, v, iv, i2 ORDER BY c, v, iv, i2;
CREATE VIEW v_agg_long AS
	SELECT g, count(*) AS cnt, sum(x) AS s_x, avg(y) AS a_y, sum(z) AS s_z, min(w) AS min_w,
		max(y) AS max_y
	FROM t_long GROUP BY g ORDER BY g;
CREATE VIEW v_agg_total AS
	SELECT count(*) AS cnt, sum(i8) AS s_i8, sum(n) AS s_n, avg(f8) AS a_f8, min(ts) AS min_ts,
		max(d) AS max_d, sum(nt) FILTER (WHERE i2 > 0) AS s_nt_pos
	FROM t_big;
-- Sorts on the keys GpuSort takes, and on others.
CREATE VIEW v_sort_f8 AS SELECT * FROM t_big ORDER BY f8 DESC NULLS LAST, k;
CREATE VIEW v_sort_multi AS SELECT k, i2, i8, f4, d, ts, tz, n FROM t_mid ORDER BY d, tz DESC, f4 NULLS FIRST, i8, k;
CREATE VIEW v_sort_text AS SELECT k, t, v, n, u FROM t_big ORDER BY t, n DESC, k;
CREATE VIEW v_sort_long AS SELECT * FROM t_long ORDER BY x, w DESC, id;
CREATE VIEW v_distinct AS SELECT DISTINCT i2, f4, d FROM t_big ORDER BY i2, f4, d;

CREATE ROLE smith LOGIN;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO smith;
VACUUM ANALYZE;
