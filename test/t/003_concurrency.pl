# Concurrency: 32 sessions share the device for GPUEXT_TAP_DURATION seconds (60) through pgbench,
# running gpu_sort, array and column aggregates, gpu_query_agg and GPU ORDER BY on random sizes and
# data; every statement checks its own result against PostgreSQL's and raises an ERROR when it is
# wrong, so zero failed transactions means every result was right.  The device's free memory is
# back where it started once the sessions are gone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my $clients = 32;
my $duration = $ENV{GPUEXT_TAP_DURATION} || 60;
my $node = gpuext_node('concurrency', preload => 1,
	conf => ['max_connections = 50', 'gpuext.sort_min_rows = 0', 'gpuext.min_gpu_elements = 0']);
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT i, ((i::int8 * 7919) % 100003 - 50000)::int AS x, (i % 1000)::float8 / 7 AS f,
  CASE WHEN i % 17 = 0 THEN NULL ELSE now()::timestamp - i * interval '1 minute' END AS ts
FROM generate_series(1, 300000) i;
ANALYZE t;
CREATE FUNCTION must(ok boolean, what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'wrong result: %', what;
  END IF;
  RETURN true;
END $$;
});
like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT x, i FROM t WHERE i <= 1000 ORDER BY x, i'),
	sort_plan($node), 'ORDER BY runs through GpuSort (where it can use a GPU)');
my $device = device_ready($node);
my $free_before = $node->safe_psql('postgres', 'SELECT coalesce(memory_free, 0) FROM gpuext_info()');

my %scripts = (
	'sort.sql' => q{
\set n random(0, 300000)
\set seed random(1, 100000)
\set desc random(0, 1)
SELECT must(gpu_sort(a, :desc = 1) = (SELECT CASE WHEN :desc = 1 THEN array_agg(v ORDER BY v DESC)
                                                   ELSE array_agg(v ORDER BY v) END FROM unnest(a) v),
            'gpu_sort int4') FROM (SELECT coalesce(array_agg(CASE WHEN i % 101 = 0 THEN NULL ELSE ((i::int8 * :seed) % 100003)::int END),
                                             '{}') AS a FROM generate_series(1, :n) i) s;
SELECT must(gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v), 'gpu_sort float8')
FROM (SELECT array_agg(((i::int8 * :seed) % 10007)::float8 / 3) AS a FROM generate_series(1, :n / 4 + 1) i) s;
},
	'agg.sql' => q{
\set n random(1, 500000)
\set seed random(1, 100000)
SELECT must(gpu_sum(x) = sum(x) AND gpu_min(x) = min(x) AND gpu_max(x) = max(x) AND gpu_count(x) = count(x)
            AND gpu_avg(x) = avg(x) AND gpu_sum(x::float8) = sum(x)::float8, 'column aggregates')
FROM (SELECT ((i::int8 * :seed) % 100003 - 50000)::int AS x FROM generate_series(1, :n) i) s;
SELECT must(gpu_sum(a) = (SELECT sum(v) FROM unnest(a) v) AND gpu_max(a) = (SELECT max(v) FROM unnest(a) v),
            'array aggregates') FROM (SELECT array_agg((i::int8 * :seed) % 1000003) AS a FROM generate_series(1, :n) i) s;
SELECT must(q.count = :n AND q.sum = (SELECT sum(v) FROM generate_series(1, :n) v), 'gpu_query_agg')
FROM gpu_query_agg('SELECT generate_series(1, :n)') q;
},
	'orderby.sql' => q{
\set n random(2, 300000)
SELECT must(array_agg(s.i) = (SELECT array_agg(i ORDER BY x DESC, i) FROM t WHERE i <= :n), 'ORDER BY rows')
FROM (SELECT * FROM t WHERE i <= :n ORDER BY x DESC, i) s;
SELECT must(array_agg(s.i) = (SELECT array_agg(i ORDER BY x, i) FROM t WHERE i <= :n), 'ORDER BY keys')
FROM (SELECT x, i FROM t WHERE i <= :n ORDER BY x, i) s;
SELECT must(array_agg(s.i) = (SELECT array_agg(i ORDER BY ts NULLS FIRST, f DESC, i) FROM t WHERE i <= :n),
            'ORDER BY timestamp, float8')
FROM (SELECT i FROM t WHERE i <= :n ORDER BY ts NULLS FIRST, f DESC, i) s;
SELECT must(array_agg(x) = (SELECT array_agg(x ORDER BY x) FROM t WHERE i <= :n), 'gpu_query_sort')
FROM gpu_query_sort('SELECT x FROM t WHERE i <= :n') AS s(x int);
},
);
my @files;
for my $name (sort keys %scripts)
{
	my $path = $node->basedir . "/$name";
	open my $fh, '>', $path or die "cannot write $path: $!";
	print $fh $scripts{$name};
	close $fh;
	push @files, '-f', $path;
}

my ($stdout, $stderr);
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', $clients, '-j', 4, '-T', $duration, '-P', 10, @files,
		'-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$stdout, '2>', \$stderr);
my ($transactions) = $stdout =~ /number of transactions actually processed: (\d+)/;
my ($failed) = $stdout =~ /number of failed transactions: (\d+)/;
$failed = 0 unless defined $failed;
ok($ok, "pgbench: $clients sessions for $duration s finished without an aborted client");
unlike($stderr, qr/ERROR|aborted/, 'no statement raised an error (every result verified)') or diag($stderr);
is($failed, 0, 'no failed transactions');
ok(defined $transactions && $transactions > 0, 'transactions ran');
my %per_script = map { $_ => 0 } keys %scripts;
while ($stdout =~ /SQL script \d+: \S+\/(\w+\.sql)\n.*?- (\d+) transactions/sg)
{
	$per_script{$1} = $2;
}
ok($per_script{$_} > 0, "$_ ran ($per_script{$_} transactions)") for sort keys %scripts;
my $statements = 2 * $per_script{'sort.sql'} + 3 * $per_script{'agg.sql'} + 4 * $per_script{'orderby.sql'};
diag(sprintf('concurrency (gpuext.device = %s): %d sessions, %d s, %d transactions, %d verified statements, %d failed',
		device_mode(), $clients, $duration, $transactions // 0, $statements, $failed));

# Once the sessions are gone, the device's free memory is back (allowing for rounding by the driver).
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
  or die 'pgbench sessions did not go away';
my $free_after = $node->safe_psql('postgres', 'SELECT coalesce(memory_free, 0) FROM gpuext_info()');
SKIP:
{
	skip 'no device', 1 unless $device;
	cmp_ok($free_after, '>=', $free_before - 64 * 1024 * 1024,
		"device free memory back after disconnect ($free_before before, $free_after after)");
}
is($node->safe_psql('postgres', 'SELECT device_bytes FROM gpuext_info()'), '0', 'a new session holds no device memory');
$node->stop;
done_testing();
