-- bench/tpch_data.sql: the tables of bench/tpch.sh in schema gpuext_tpch, made with generate_series
-- and a deterministic pseudo-random number (a hash of the row's identity and a stream number), so
-- that the same ROWS gives the same rows on any server.  Usage: psql -v rows=N -f bench/tpch_data.sql
--   lineitem       the TPC-H specification's 16 columns (clause 4.2.3's values, its DDL's types;
--                  l_orderkey bigint), ROWS rows
--   lineitem_f8    the same rows with l_quantity, l_extendedprice, l_discount and l_tax as double
--                  precision, plus l_key1m integer (pseudo-random in 0 .. 999,999: the 1M-group key)
--   lineitem_small the first 1,000 rows of lineitem_f8
-- Scale factor SF = ROWS / 6,001,215 (lineitem's rows at SF 1) sets the key ranges: parts
-- 1 .. SF * 200,000, suppliers 1 .. SF * 10,000.  Orders come one after another, each with 1 to 7
-- lines, with the specification's sparse keys (the first 8 of each 32), until ROWS lines.  The
-- comment is 10 to 43 characters taken from a fixed text made of the specification's text grammar
-- words, an approximation of its generated text.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE SCHEMA IF NOT EXISTS gpuext_tpch;
SET search_path = gpuext_tpch;
DROP TABLE IF EXISTS lineitem, lineitem_f8, lineitem_small;

-- tpch_rnd(id, stream, lo, hi): an integer uniform in lo .. hi, the same for the same id and stream.
CREATE OR REPLACE FUNCTION tpch_rnd(id int8, stream int8, lo int8, hi int8) RETURNS int8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS 'SELECT lo + (hashint8extended(id, stream) & 9223372036854775807) % (hi - lo + 1)';

-- Orders to generate: 4 lines each on average, with a margin; the LIMIT below takes ROWS lines.
SELECT ceil(:rows * 0.275)::int8 + 16 AS orders,
	greatest(round(:rows / 6001215.0 * 200000), 10)::int8 AS parts,
	greatest(round(:rows / 6001215.0 * 10000), 4)::int8 AS supps \gset
\set corpus 'furiously regular pinto beans sleep slyly about the carefully ironic deposits. quickly final packages wake blithely among the even accounts; bold requests haggle fluffily against the silent foxes. express theodolites nag daringly above the pending ideas, and careful dependencies use furiously along the quiet instructions. special asymptotes cajole closely beside the regular platelets.'

CREATE TABLE lineitem (
	l_orderkey bigint NOT NULL,
	l_partkey integer NOT NULL,
	l_suppkey integer NOT NULL,
	l_linenumber integer NOT NULL,
	l_quantity numeric(15,2) NOT NULL,
	l_extendedprice numeric(15,2) NOT NULL,
	l_discount numeric(15,2) NOT NULL,
	l_tax numeric(15,2) NOT NULL,
	l_returnflag char(1) NOT NULL,
	l_linestatus char(1) NOT NULL,
	l_shipdate date NOT NULL,
	l_commitdate date NOT NULL,
	l_receiptdate date NOT NULL,
	l_shipinstruct char(25) NOT NULL,
	l_shipmode char(10) NOT NULL,
	l_comment varchar(44) NOT NULL
);

-- o: the order's number (its key is the o-th sparse key), l: the line number, id: o * 8 + l.
-- Order date uniform in 1992-01-01 .. 1998-08-02 (ENDDATE 1998-12-31 minus 151 days); ship date
-- 1 .. 121 days after it, commit date 30 .. 90, receipt date 1 .. 30 after shipping; CURRENTDATE
-- 1995-06-17 decides the return flag ('R' or 'A' if received by then, else 'N') and the status.
-- Retail price of part p: (90000 + ((p / 10) mod 20001) + 100 * (p mod 1000)) / 100.
INSERT INTO lineitem
SELECT okey, partkey,
	(partkey + tpch_rnd(id, 4, 0, 3) * (:supps / 4 + (partkey - 1) / :supps)) % :supps + 1,
	l, qty, qty * (90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000)) / 100.0,
	tpch_rnd(id, 6, 0, 10) / 100.0, tpch_rnd(id, 7, 0, 8) / 100.0,
	CASE WHEN receipt <= date '1995-06-17' THEN (ARRAY['R', 'A'])[tpch_rnd(id, 11, 1, 2)] ELSE 'N' END,
	CASE WHEN ship > date '1995-06-17' THEN 'O' ELSE 'F' END,
	ship, odate + tpch_rnd(id, 9, 30, 90)::int, receipt,
	(ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])[tpch_rnd(id, 12, 1, 4)],
	(ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'])[tpch_rnd(id, 13, 1, 7)],
	substr(:'corpus', tpch_rnd(id, 14, 1, length(:'corpus') - 43)::int, tpch_rnd(id, 15, 10, 43)::int)
FROM (SELECT *, ship + tpch_rnd(id, 10, 1, 30)::int AS receipt
	FROM (SELECT okey, odate, l, id, tpch_rnd(id, 3, 1, :parts) AS partkey, tpch_rnd(id, 5, 1, 50) AS qty,
			odate + tpch_rnd(id, 8, 1, 121)::int AS ship
		FROM (SELECT o, (o - 1) / 8 * 32 + (o - 1) % 8 + 1 AS okey,
				date '1992-01-01' + tpch_rnd(o, 1, 0, date '1998-08-02' - date '1992-01-01')::int AS odate
			FROM generate_series(1::int8, :orders) o) ord,
			LATERAL generate_series(1, tpch_rnd(o, 2, 1, 7)::int) l,
			LATERAL (SELECT o * 8 + l AS id) i
		LIMIT :rows) lines) dated;

CREATE TABLE lineitem_f8 (
	l_orderkey bigint NOT NULL,
	l_partkey integer NOT NULL,
	l_suppkey integer NOT NULL,
	l_linenumber integer NOT NULL,
	l_quantity double precision NOT NULL,
	l_extendedprice double precision NOT NULL,
	l_discount double precision NOT NULL,
	l_tax double precision NOT NULL,
	l_returnflag char(1) NOT NULL,
	l_linestatus char(1) NOT NULL,
	l_shipdate date NOT NULL,
	l_commitdate date NOT NULL,
	l_receiptdate date NOT NULL,
	l_shipinstruct char(25) NOT NULL,
	l_shipmode char(10) NOT NULL,
	l_comment varchar(44) NOT NULL,
	l_key1m integer NOT NULL
);
INSERT INTO lineitem_f8 SELECT *, tpch_rnd(l_orderkey * 8 + l_linenumber, 16, 0, 999999) FROM lineitem;
CREATE TABLE lineitem_small AS SELECT * FROM lineitem_f8 LIMIT 1000;
VACUUM ANALYZE lineitem;
VACUUM ANALYZE lineitem_f8;
VACUUM ANALYZE lineitem_small;
-- bench/tpch.sh reuses tables whose comment names their row count, set once the rows are all there.
SELECT count(*) = :rows AS complete FROM lineitem \gset
\if :complete
\set note 'bench/tpch_data.sql, ' :rows ' rows'
COMMENT ON TABLE lineitem_f8 IS :'note';
\else
\echo 'bench/tpch_data.sql: lineitem did not get' :rows 'rows'
\endif
