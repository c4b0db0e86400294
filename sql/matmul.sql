-- gpu_matmul: shapes, errors, identities, random matrices against a plain SQL product computed here,
-- and the same bits from every algorithm: the CPU's and the device kernels' (the GPU, or the fake
-- device; without a device every algorithm runs on the CPU, and the comparison still holds).
-- matmul.out: a device (GPU or fake); matmul_1.out: none (the injected failures at the end never fire).
LOAD 'gpuext';
SET gpuext.device = auto;
SELECT setseed(0.5);

-- An m x n matrix of random values in (-1, 1) (never all zeros), and a plain SQL product in float8.
CREATE FUNCTION rand_matrix(m int, n int) RETURNS float8[] LANGUAGE sql VOLATILE AS $$
  SELECT array_agg(r ORDER BY i) FROM (
    SELECT i, array_agg(random() * 2 - 1 ORDER BY j) AS r
    FROM generate_series(1, m) i, generate_series(1, n) j GROUP BY i) s $$;
CREATE FUNCTION sql_matmul(a float8[], b float8[]) RETURNS float8[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(r ORDER BY i) FROM (
    SELECT i, array_agg(s ORDER BY j) AS r FROM (
      SELECT i, j, sum(a[i][k] * b[k][j]) AS s
      FROM generate_series(1, array_length(a, 1)) i, generate_series(1, array_length(b, 2)) j,
           generate_series(1, array_length(a, 2)) k
      GROUP BY i, j) e GROUP BY i) rows $$;
CREATE FUNCTION abs_matrix(a float8[]) RETURNS float8[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(r ORDER BY i) FROM (
    SELECT i, array_agg(abs(a[i][j]) ORDER BY j) AS r
    FROM generate_series(1, array_length(a, 1)) i, generate_series(1, array_length(a, 2)) j GROUP BY i) s $$;
-- An error as SQLSTATE: message, or ok.
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE FUNCTION matmul_held() RETURNS bigint LANGUAGE sql AS $$ SELECT device_bytes FROM gpuext_info(false) $$;
CREATE TEMP TABLE algos (algo text);
INSERT INTO algos VALUES ('auto'), ('naive'), ('tiled'), ('blocked'), ('cpu');

-- Shapes: 1x1, a row by a column, a column by a row, non-square; both types; result bounds from 1.
SELECT gpu_matmul('{{3}}'::real[], '{{4}}'::real[]);
SELECT gpu_matmul('{{1,2,3}}'::float8[], '{{4},{5},{6}}'::float8[]);
SELECT gpu_matmul('{{1},{2},{3}}'::real[], '{{4,5}}'::real[]);
SELECT r, array_dims(r), pg_typeof(r)
FROM (SELECT gpu_matmul('{{1,2,3},{4,5,6}}'::float8[], '{{1,0,2,1},{0,1,1,2},{1,1,0,3}}'::float8[]) r) s;
SELECT r, array_dims(r), pg_typeof(r)
FROM (SELECT gpu_matmul('[0:1][5:6]={{1,2},{3,4}}'::real[], '[-3:-2][2:2]={{1},{1}}'::real[]) r) s;
-- Every algorithm, both types, the same small product.
SELECT algo, gpu_matmul('{{1,2},{3,4},{5,6}}'::real[], '{{1,-1,2},{-2,1,0.5}}'::real[], algo) AS f4,
       gpu_matmul('{{1,2},{3,4},{5,6}}'::float8[], '{{1,-1,2},{-2,1,0.5}}'::float8[], algo) AS f8
FROM algos;
-- real[] by double precision[] takes the double precision function; NULL in, NULL out.
SELECT gpu_matmul('{{0.5}}'::real[], '{{2}}'::float8[]), gpu_matmul(NULL::real[], '{{1}}'::real[]) IS NULL;
-- An array with a zero-length dimension is the empty array '{}' in PostgreSQL, so an n x 0
-- matrix cannot be written: '{}' is the empty matrix of whichever shape fits (0 x k or k x 0),
-- and the product is then empty too.
SELECT gpu_matmul('{}'::real[], '{}'::real[]), gpu_matmul('{}'::float8[], '{{1,2},{3,4}}'::float8[]),
       gpu_matmul('{{1,2},{3,4}}'::float8[], '{}'::float8[], 'tiled'),
       array_dims(gpu_matmul('{}'::float8[], '{{1}}'::float8[]));

-- Errors and their SQLSTATE.
SELECT q, try(q) FROM (VALUES
  ('SELECT gpu_matmul(''{1,2}''::real[], ''{{1},{2}}''::real[])'),
  ('SELECT gpu_matmul(''{{1,2}}''::real[], ''{{{1}},{{2}}}''::real[])'),
  ('SELECT gpu_matmul(''{{1,2,3,4},{1,2,3,4},{1,2,3,4}}''::float8[], ''{{1,2},{1,2},{1,2},{1,2},{1,2}}''::float8[])'),
  ('SELECT gpu_matmul(''{{1,2}}''::float8[], ''{{1}}''::float8[])'),
  ('SELECT gpu_matmul(''{{1,NULL}}''::float8[], ''{{1},{2}}''::float8[])'),
  ('SELECT gpu_matmul(''{{1,2}}''::real[], ''{{1},{NULL}}''::real[], ''cpu'')'),
  ('SELECT gpu_matmul(''{{1}}''::real[], ''{{1}}''::real[], ''strassen'')'),
  ('SELECT gpu_matmul(array_fill(1::real, ARRAY[20000, 1]), array_fill(1::real, ARRAY[1, 20000]))'),
  ('SELECT gpu_matmul(array_fill(1::float8, ARRAY[11600, 1]), array_fill(1::float8, ARRAY[1, 11600]))')
) t(q);
-- Algorithm names are case-insensitive.
SELECT gpu_matmul('{{2}}'::real[], '{{3}}'::real[], 'Tiled');

-- Random inputs: sizes at and around the kernels' tiles (16; 128 and its 8-deep k steps), primes,
-- a dot product and an outer product of length 1000, sizes whose rows allow 16-byte loads and not.
CREATE TEMP TABLE cases AS
SELECT m, k, n, rand_matrix(m, k) AS a, rand_matrix(k, n) AS b
FROM (VALUES (1, 1, 1), (2, 2, 2), (17, 33, 5), (33, 17, 33), (16, 16, 16), (31, 37, 41),
             (1, 1000, 1), (1000, 1, 3), (129, 9, 130), (130, 20, 132), (64, 32, 64)) v(m, k, n);
ALTER TABLE cases ADD ref float8[], ADD ref4 float8[], ADD bound float8[];
UPDATE cases SET ref = sql_matmul(a, b), ref4 = sql_matmul(a::real[]::float8[], b::real[]::float8[]),
  bound = sql_matmul(abs_matrix(a), abs_matrix(b));
-- The inputs are what they claim: shapes, and no zeros.
SELECT m, k, n, array_dims(a) AS a_dims, array_dims(b) AS b_dims, array_dims(ref) AS ref_dims,
       0 <> ALL (a) AND 0 <> ALL (b) AS nonzero
FROM cases ORDER BY m, k, n;

-- Within rounding of the SQL product (|error| <= k * eps * sum |a||b|), for each algorithm and type;
-- and the same bits (array_send: dimensions and every element) as the CPU's product.
CREATE TEMP TABLE results AS
SELECT c.m, c.k, c.n, g.algo,
       gpu_matmul(c.a, c.b, g.algo) AS p8, gpu_matmul(c.a::real[], c.b::real[], g.algo) AS p4
FROM cases c, algos g;
SELECT r.algo, count(*) AS cases,
       count(*) FILTER (WHERE (SELECT bool_and(abs(x - y) <= c.k * 2.3e-16 * s)
                               FROM unnest(r.p8, c.ref, c.bound) u(x, y, s))) AS f8_within,
       count(*) FILTER (WHERE (SELECT bool_and(abs(x - y) <= (c.k + 2) * 1.2e-7 * s)
                               FROM unnest(r.p4, c.ref4, c.bound) u(x, y, s))) AS f4_within,
       count(*) FILTER (WHERE array_send(r.p8) = array_send(cpu.p8)) AS f8_same_bits,
       count(*) FILTER (WHERE array_send(r.p4) = array_send(cpu.p4)) AS f4_same_bits
FROM results r JOIN cases c USING (m, k, n) JOIN results cpu ON cpu.algo = 'cpu' AND (cpu.m, cpu.k, cpu.n) = (c.m, c.k, c.n)
GROUP BY r.algo ORDER BY r.algo;

-- Identities: A I = A and I A = A exactly, for every algorithm.
CREATE FUNCTION identity(n int) RETURNS float8[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(r ORDER BY i) FROM (
    SELECT i, array_agg(CASE WHEN i = j THEN 1 ELSE 0 END::float8 ORDER BY j) AS r
    FROM generate_series(1, n) i, generate_series(1, n) j GROUP BY i) s $$;
SELECT g.algo,
       bool_and(gpu_matmul(c.a, identity(c.k), g.algo) = c.a AND gpu_matmul(identity(c.m), c.a, g.algo) = c.a
                AND gpu_matmul(c.a::real[], identity(c.k)::real[], g.algo) = c.a::real[]) AS identity_ok
FROM cases c, algos g WHERE c.m <= 200 AND c.k <= 200 GROUP BY g.algo ORDER BY g.algo;

-- gpuext.device = cpu runs every algorithm on the CPU: the same bits again.
SET gpuext.device = cpu;
SELECT count(*) FILTER (WHERE array_send(gpu_matmul(c.a, c.b, r.algo)) = array_send(r.p8)
                          AND array_send(gpu_matmul(c.a::real[], c.b::real[], r.algo)) = array_send(r.p4))
       AS same_bits_on_cpu, count(*) AS cases
FROM results r JOIN cases c USING (m, k, n);
SET gpuext.device = auto;

-- NaN and infinities propagate as IEEE arithmetic says; -0 sums to +0 (the sum starts at +0);
-- every NaN comes back as the one default NaN, so the bits agree everywhere.
CREATE TEMP TABLE specials (name text, a4 real[], b4 real[], a8 float8[], b8 float8[]);
INSERT INTO specials VALUES
  ('nan, inf * 0', '{{1,NaN},{Infinity,1}}', '{{1,0},{2,3}}', '{{1,NaN},{Infinity,1}}', '{{1,0},{2,3}}'),
  ('inf - inf', '{{Infinity,-Infinity},{-Infinity,-Infinity}}', '{{1},{1}}',
   '{{Infinity,-Infinity},{-Infinity,-Infinity}}', '{{1},{1}}'),
  ('-0', '{{-0,-0}}', '{{1},{2}}', '{{-0,-0}}', '{{1},{2}}'),
  ('overflow', '{{3e38,3e38}}', '{{10},{1}}', '{{1e308,1e308}}', '{{10},{1}}'),
  ('subnormal', '{{1e-45,1e-45}}', '{{0.5},{3}}', '{{5e-324,5e-324}}', '{{0.5},{3}}'),
  -- the order of the sum is part of the answer: 1e8 + 1 rounds to 1e8 in real before -1e8
  ('order', '{{1e8,1,-1e8}}', '{{1},{1},{1}}', '{{1e17,1,-1e17}}', '{{1},{1},{1}}');
SELECT s.name, g.algo, gpu_matmul(s.a4, s.b4, g.algo) AS f4, gpu_matmul(s.a8, s.b8, g.algo) AS f8
FROM specials s, algos g WHERE g.algo IN ('cpu', 'blocked') ORDER BY s.name, g.algo;
SELECT count(*) AS cases,
       count(*) FILTER (WHERE array_send(gpu_matmul(s.a8, s.b8, g.algo)) = array_send(gpu_matmul(s.a8, s.b8, 'cpu'))
                          AND array_send(gpu_matmul(s.a4, s.b4, g.algo))
                              = array_send(gpu_matmul(s.a4, s.b4, 'cpu'))) AS same_bits
FROM specials s, algos g;
SELECT matmul_held() AS device_bytes;

-- Device failures (gpuext.debug_fail_device_calls) in the product: under auto a WARNING and the
-- CPU's answer, the same bits; under gpu an ERROR.  Without a device none fires, and gpu is refused.
SELECT device_state = 'ready' AS device_ready FROM gpuext_info();
CREATE TEMP TABLE big AS SELECT a, b, ref FROM cases WHERE (m, k, n) = (130, 20, 132);
CREATE TEMP TABLE big_cpu AS SELECT gpu_matmul(a, b, 'cpu') AS p FROM big;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT array_send(gpu_matmul(a, b, 'blocked')) = array_send(p) AS same_bits FROM big, big_cpu;
SET gpuext.debug_fail_device_calls = 'copy:1:1';
SELECT array_send(gpu_matmul(a, b, 'naive')) = array_send(p) AS same_bits FROM big, big_cpu;
SET gpuext.debug_fail_device_calls = 'sync:1:2';
SELECT array_send(gpu_matmul(a, b, 'tiled')) = array_send(p) AS same_bits FROM big, big_cpu;
SET gpuext.debug_fail_device_calls = 'alloc:1';
SELECT array_send(gpu_matmul(a, b, 'blocked')) = array_send(p) AS same_bits FROM big, big_cpu;
SET gpuext.device = gpu;
SET gpuext.debug_fail_device_calls = 'kernel:1';
\set VERBOSITY terse
SELECT gpu_matmul(a, b) IS NOT NULL FROM big;
-- The next statement runs on the device again.
SELECT array_send(gpu_matmul(a, b)) = array_send(p) AS same_bits FROM big, big_cpu;
\set VERBOSITY default
RESET gpuext.debug_fail_device_calls;
RESET gpuext.device;
SELECT matmul_held() AS device_bytes;
