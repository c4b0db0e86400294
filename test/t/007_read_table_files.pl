# GpuAgg reading all-visible pages straight from the table's files (gpuext.read_table_files), on a
# cluster without data checksums (nothing to catch a torn page), while writers change the table
# under it: transfers between rows (the total balance never changes), rows moving between groups,
# rows deleted and inserted again elsewhere, VACUUM setting pages all-visible again, CHECKPOINT and
# a busy background writer writing pages out, and shared_buffers small enough that most pages are
# evicted and read again.  Checkers, in one REPEATABLE READ snapshot per transaction, compare every
# statement's answer from GpuAgg (forced, thresholds 0; serial and with parallel workers) with
# PostgreSQL's (gpuext.enable_agg = off) and GpuAgg's total with the writers' invariant; an ERROR
# on any difference fails the test.  Pages must have been read both from the files and through
# shared buffers.  The protocol that makes this sound is in doc/design.md ("Reading table files").
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my $duration = $ENV{GPUEXT_TAP_DURATION} && $ENV{GPUEXT_TAP_DURATION} < 30 ? $ENV{GPUEXT_TAP_DURATION} : 30;
my $rows = 600000;

my $node = gpuext_node('read_table_files', checksums => 0,
	conf => ['shared_buffers = 8MB', 'gpuext.agg_min_rows = 0', 'gpuext.min_gpu_elements = 0',
		'session_preload_libraries = gpuext', 'autovacuum = off', 'bgwriter_lru_maxpages = 0',
		'max_wal_size = 1GB']);
if ($node->safe_psql('postgres', 'SELECT gpu_kernels FROM gpuext_info(open_device => false)') ne 't'
	|| device_mode() eq 'cpu')
{
	plan skip_all => 'GpuAgg is not planned here (a build without device code, or gpuext.device = cpu)';
}
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'off', 'the cluster has no data checksums');

$node->safe_psql('postgres', qq{
CREATE TABLE acct (id int PRIMARY KEY, grp int NOT NULL, bal int8 NOT NULL, val float8 NOT NULL)
  WITH (fillfactor = 90);
INSERT INTO acct SELECT i, i % 100, 1000, (i % 1000) / 8.0 FROM generate_series(1, $rows) i;
CREATE TABLE total AS SELECT count(*) AS n, sum(bal) AS bal, sum(val) AS val FROM acct;
CREATE TABLE seen (files bigint, buffers bigint, parallel boolean);
-- Move d from row a to row b, the lower id first (no deadlock); a row deleted and inserted again
-- meanwhile is found again by the next statement's snapshot.
CREATE FUNCTION transfer(a int, b int, d int) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
  IF a > b THEN
    PERFORM transfer(b, a, -d);
    RETURN;
  END IF;
  LOOP
    UPDATE acct SET bal = bal - d WHERE id = a;
    EXIT WHEN FOUND;
  END LOOP;
  LOOP
    UPDATE acct SET bal = bal + d WHERE id = b;
    EXIT WHEN FOUND;
  END LOOP;
END \$\$;
-- Every statement's answer from GpuAgg against PostgreSQL's in the caller's snapshot, then the
-- writers' invariant by GpuAgg; an ERROR on any difference.
CREATE FUNCTION check_snapshot(parallel boolean) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  queries text[] := ARRAY[
    'SELECT count(*), sum(bal), min(bal), max(bal), sum(val), avg(val) FROM acct',
    'SELECT grp, count(*), sum(bal), min(bal), max(bal), sum(val) FROM acct GROUP BY grp',
    'SELECT sum(bal), count(*), max(id) FROM acct WHERE grp < 50'];
  q text;
  got text[];
  want text[];
  plan jsonb;
  node jsonb;
BEGIN
  IF current_setting('transaction_isolation') <> 'repeatable read' THEN
    RAISE EXCEPTION 'check_snapshot needs one snapshot for the whole transaction';
  END IF;
  IF parallel THEN
    PERFORM set_config('max_parallel_workers_per_gather', '2', true);
    PERFORM set_config('parallel_setup_cost', '0', true);
    PERFORM set_config('parallel_tuple_cost', '0', true);
    PERFORM set_config('min_parallel_table_scan_size', '0', true);
  ELSE
    PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  END IF;
  FOREACH q IN ARRAY queries LOOP
    EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
    node := jsonb_path_query_first(plan, '\$.** ? (@."Custom Plan Provider" == "GpuAgg")');
    IF node IS NULL THEN
      RAISE EXCEPTION 'GpuAgg was not planned for %', q;
    END IF;
    INSERT INTO seen VALUES ((node->>'Heap Blocks From Files')::bigint, (node->>'Heap Blocks Through Buffers')::bigint,
                             parallel);
    EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
    PERFORM set_config('gpuext.enable_agg', 'off', true);
    EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO want;
    PERFORM set_config('gpuext.enable_agg', 'on', true);
    IF got IS DISTINCT FROM want THEN
      RAISE EXCEPTION 'GpuAgg answered % where PostgreSQL answered % (of % and % rows, parallel %): %',
        (SELECT g FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
        (SELECT w FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
        cardinality(got), cardinality(want), parallel, q;
    END IF;
  END LOOP;
  IF (SELECT row(count(*), sum(bal), sum(val)) FROM acct) IS DISTINCT FROM (SELECT row(n, bal, val) FROM total) THEN
    RAISE EXCEPTION 'the invariant broke: GpuAgg counted % where the writers keep %',
      (SELECT row(count(*), sum(bal), sum(val)) FROM acct), (SELECT row(n, bal, val) FROM total);
  END IF;
END \$\$;
});
$node->safe_psql('postgres', 'VACUUM (ANALYZE) acct');
$node->safe_psql('postgres', 'CHECKPOINT');
my $pages = $node->safe_psql('postgres', "SELECT pg_relation_size('acct') / current_setting('block_size')::int");
cmp_ok($pages, '>', 4 * 1024, "the table ($pages pages) is much larger than shared_buffers");

my %scripts = (
	# Writers: every transaction keeps count(*), sum(bal) and sum(val).
	'transfer.sql' => qq{
\\set a random(1, $rows)
\\set b random(1, $rows)
\\set d random(1, 100)
SELECT transfer(:a, :b, :d);
},
	'move.sql' => qq{
\\set a random(1, $rows)
UPDATE acct SET grp = (grp + 1) % 100 WHERE id = :a;
},
	'reinsert.sql' => qq{
\\set a random(1, $rows)
WITH d AS (DELETE FROM acct WHERE id = :a RETURNING *) INSERT INTO acct SELECT * FROM d;
},
	'rollback.sql' => qq{
\\set a random(1, $rows)
BEGIN;
UPDATE acct SET bal = bal + 1000000 WHERE id = :a;
INSERT INTO acct VALUES (-:a, 7, 1000000, 0.5);
ROLLBACK;
},
	'vacuum.sql' => q{
VACUUM acct;
\sleep 100 ms
},
	'checkpoint.sql' => q{
\sleep 2 s
CHECKPOINT;
},
	'check.sql' => q{
\set p random(0, 2)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT check_snapshot(:p = 0);
COMMIT;
},
);
my %path;
for my $name (keys %scripts)
{
	$path{$name} = $node->basedir . "/$name";
	open my $fh, '>', $path{$name} or die "cannot write $path{$name}: $!";
	print $fh $scripts{$name};
	close $fh;
}

# pgbench in the background: clients, a rate (transactions per second, 0: as fast as they go),
# scripts with weights; returns (harness, \stdout, \stderr).
sub pgbench
{
	my ($clients, $rate, @files) = @_;
	my ($out, $err) = ('', '');
	my @cmd = ('pgbench', '-n', '-c', $clients, '-j', $clients, '-T', $duration, ($rate ? ('-R', $rate) : ()),
		(map { ('-f', $_) } @files), '-h', $node->host, '-p', $node->port, 'postgres');
	return (IPC::Run::start(\@cmd, '>', \$out, '2>', \$err), \$out, \$err);
}

# (transactions, failed) of a pgbench run.
sub counts
{
	my ($out) = @_;
	my ($tx) = $$out =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $$out =~ /number of failed transactions: (\d+)/;
	return ($tx // 0, $failed // 0);
}

my %runs = (
	writers => [pgbench(4, 200, "$path{'transfer.sql'}\@10", "$path{'move.sql'}\@3", "$path{'reinsert.sql'}\@3",
		"$path{'rollback.sql'}\@1")],
	vacuum => [pgbench(1, 0, $path{'vacuum.sql'})],
	checkpoint => [pgbench(1, 0, $path{'checkpoint.sql'})],
	checkers => [pgbench(2, 0, $path{'check.sql'})],
);
for my $name (sort keys %runs)
{
	my ($h, $out, $err) = @{ $runs{$name} };
	my $ok = $h->finish;
	my ($tx, $failed) = counts($out);
	ok($ok, "$name: pgbench ran to the end") or diag($$err);
	unlike($$err, qr/ERROR|aborted/, "$name: no statement failed") or diag($$err);
	cmp_ok($tx, '>', 0, "$name: $tx transactions, $failed failed");
	diag("$name: $tx transactions") if $name eq 'checkers';
}

my ($files, $buffers, $checks) = split /\|/, $node->safe_psql('postgres',
	'SELECT sum(files), sum(buffers), count(*) FROM seen');
diag("GpuAgg read $files pages from the files and $buffers through shared buffers in $checks checked statements");
cmp_ok($files, '>', 0, 'pages were read from the files');
cmp_ok($buffers, '>', 0, 'and through shared buffers');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT parallel) FROM seen'), 2, 'serial and parallel plans checked');

# Quiet again: once more, and with every page all-visible and written out.
is($node->safe_psql('postgres', 'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT check_snapshot(false); COMMIT;'), '',
	'after the writers: the same answers');
$node->safe_psql('postgres', 'VACUUM acct');
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres', 'BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT check_snapshot(true); COMMIT;'), '',
	'after VACUUM and CHECKPOINT: the same answers');

$node->stop;
done_testing();
