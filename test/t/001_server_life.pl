# Server life: gpuext loaded through shared_preload_libraries, session_preload_libraries and LOAD;
# the postmaster never touches CUDA; a server restart; a backend killed with SIGKILL during GPU work
# takes the others down only as any crashed backend does (crash restart), and everything works after.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my $sort_check = q{
SELECT gpu_sort(a) = (SELECT array_agg(x ORDER BY x) FROM unnest(a) x)
   AND gpu_sum(a) = (SELECT sum(x) FROM unnest(a) x)
FROM (SELECT array_agg((i * 7919) % 100003) AS a FROM generate_series(1, 200000) i) s};
my $explain = 'EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY x';

# Whether a process has a CUDA driver library mapped or a /dev/nvidia* device open.
sub touches_cuda
{
	my ($pid) = @_;
	my $maps = slurp_file("/proc/$pid/maps");
	return 1 if $maps =~ /libcuda\.so/;
	opendir(my $dh, "/proc/$pid/fd") or return 0;
	for my $fd (readdir $dh)
	{
		my $target = readlink("/proc/$pid/fd/$fd");
		return 1 if defined $target && $target =~ m{^/dev/nvidia};
	}
	return 0;
}

# shared_preload_libraries: GpuSort plans without LOAD; the postmaster holds no CUDA state.
my $node = gpuext_node('preload', preload => 1,
	conf => ['gpuext.sort_min_rows = 0', 'restart_after_crash = on']);
$node->safe_psql('postgres',
	'CREATE TABLE t AS SELECT i, (i * 7919) % 100003 AS x FROM generate_series(1, 100000) i; ANALYZE t');
my $sort_plan = sort_plan($node);
like($node->safe_psql('postgres', $explain), $sort_plan, 'preloaded: GpuSort (where it can use a GPU) without LOAD');
is($node->safe_psql('postgres', $sort_check), 't', 'preloaded: gpu_sort and gpu_sum correct');
is( $node->safe_psql('postgres',
		'SELECT bool_and(a.x <= b.x) FROM (SELECT x, row_number() OVER () r FROM (SELECT x FROM t ORDER BY x) s) a '
		  . 'JOIN (SELECT x, row_number() OVER () r FROM (SELECT x FROM t ORDER BY x) s) b ON b.r = a.r + 1'),
	't', 'preloaded: ORDER BY through GpuSort is ordered');
my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
ok(!touches_cuda($postmaster), "the postmaster ($postmaster) has no CUDA library mapped and no GPU open");

# A server restart with the extension installed.
$node->restart;
is($node->safe_psql('postgres', $sort_check), 't', 'after a restart: results correct');
like($node->safe_psql('postgres', $explain), $sort_plan, 'after a restart: GpuSort plans');

($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');

# Crash restart: SIGKILL a backend in the middle of GPU work while another session waits idle.
my $worker = $node->background_psql('postgres', on_error_stop => 0);
my $idle = $node->background_psql('postgres', on_error_stop => 0);
my $victim = $worker->query_safe('SELECT pg_backend_pid()');
$worker->query_until(qr/started/, qq{\\echo started
SELECT count(gpu_sort(a)) FROM (SELECT array_agg(random()) AS a FROM generate_series(1, 2000000)) s,
  generate_series(1, 1000000);
});
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $victim AND state = 'active' AND query ~ 'gpu_sort'")
  or die 'the GPU statement did not start';
sleep 1;
ok(kill('KILL', $victim), "SIGKILL to backend $victim during gpu_sort");
# Their psql may have exited with the lost connection already (then writing to it fails).
eval { $worker->quit };
eval { $idle->quit };
# Wait in the log until the postmaster has reinitialized and accepts connections again (a psql
# started earlier may exit before it reads its query, which IPC::Run reports as a broken pipe).
$node->wait_for_log(
	qr/all server processes terminated; reinitializing.*database system is ready to accept connections/s);
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not come back after the crash';
my $log = slurp_file($node->logfile);
# PostgreSQL 15 says "server process", 17 and later "client backend".
like($log, qr/(?:server process|client backend) \(PID $victim\) was terminated by signal 9/, 'the postmaster saw the backend die');
like($log, qr/all server processes terminated; reinitializing/, 'crash restart reinitialized the server');
my ($postmaster_after) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
is($postmaster_after, $postmaster, 'the postmaster itself survived');
ok(!touches_cuda($postmaster), 'the postmaster still holds no CUDA state');
is($node->safe_psql('postgres', $sort_check), 't', 'after the crash: a new session sorts correctly');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '100000', 'after the crash: the table is intact');
is($node->safe_psql('postgres', 'SELECT device_bytes FROM gpuext_info()'), '0',
	'after the crash: a new backend holds no device memory');
$node->stop;

# Per session: without preloading the planner hook is absent until LOAD or session_preload_libraries.
my $plain = gpuext_node('session', conf => ['gpuext.sort_min_rows = 0']);
$plain->safe_psql('postgres',
	'CREATE TABLE t AS SELECT i, (i * 7919) % 100003 AS x FROM generate_series(1, 100000) i; ANALYZE t');
unlike($plain->safe_psql('postgres', $explain), qr/GpuSort/, 'not preloaded: PostgreSQL Sort');
like($plain->safe_psql('postgres', "LOAD 'gpuext'; $explain"), $sort_plan, 'LOAD in a session: GpuSort');
is($plain->safe_psql('postgres', $sort_check), 't', 'not preloaded: gpu_sort loads the library itself');
$plain->safe_psql('postgres', "ALTER DATABASE postgres SET session_preload_libraries = 'gpuext'");
like($plain->safe_psql('postgres', $explain), $sort_plan, 'session_preload_libraries: GpuSort');
$plain->stop;

done_testing();
