# Settings a DBA sets for the whole server.
#
# gpuext.offload (changed only in the configuration file, by a reload): off turns offload off for
# every session, each checked in a fresh one and in a session that was there before the reload:
# no GpuSort or GpuAgg is planned, no device is opened, the gpu_* functions answer right on the CPU,
# gpuext.device = gpu fails saying offload is off, a plan made before runs on the CPU; no session
# turns it back on (SET, set_config, a connection's options, a SET made before the library was
# loaded); a reload turns it on again.  Without and with preloading; preloaded, the GPU service
# gets no request while it is off.
#
# With the GPU service, a client may hold by default its share of its device's pool (the pool's
# limit divided by gpuext.device_clients): gpuext_info() shows it, past it auto answers right on the
# CPU and gpu fails saying so, a reload of either setting changes it, and a superuser's
# gpuext.max_device_memory overrides it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my @conf = ('gpuext.sort_min_rows = 0', 'gpuext.agg_min_rows = 0', 'gpuext.min_gpu_elements = 0');
my $checks = q{
SELECT (SELECT gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v) FROM arr)
   AND (SELECT gpu_sum(x) = sum(x) AND gpu_max(x) = max(x) FROM t)
   AND (SELECT sum = (SELECT sum(i) FROM generate_series(1, 50000) i)
        FROM gpu_query_agg('SELECT i FROM generate_series(1, 50000) i'))
   AND gpu_matmul('{{1,2},{3,4}}'::float8[], '{{5,6},{7,8}}'::float8[]) = '{{19,22},{43,50}}'
   AND (SELECT array_agg(x) = (SELECT array_agg(x ORDER BY x) FROM t) FROM (SELECT x FROM t ORDER BY x) s)
   AND (SELECT sum(x) = (SELECT sum(v) FROM unnest((SELECT array_agg(x) FROM t)) v) FROM t);
};

# The node's psql, ON_ERROR_STOP off: (stdout, stderr).
sub psql2
{
	my ($node, $sql, %opts) = @_;
	my ($out, $err) = ('', '');
	$node->psql('postgres', $sql, stdout => \$out, stderr => \$err, on_error_stop => 0, %opts);
	return ($out, $err);
}

# Plan nodes of the sort and aggregate queries, as one string.
sub plans
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"LOAD 'gpuext'; EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY x; EXPLAIN (COSTS OFF) SELECT sum(x), count(*) FROM t");
}

# Set gpuext.offload in postgresql.conf, reload, and wait until a new session sees it.
sub set_offload
{
	my ($node, $value) = @_;
	$node->append_conf('postgresql.conf', "gpuext.offload = $value");
	$node->reload;
	$node->poll_query_until('postgres', "SELECT current_setting('gpuext.offload') FROM gpuext_info(false)", $value)
	  or die "gpuext.offload never became $value";
}

for my $preload (0, 1)
{
	my $what = $preload ? 'preloaded' : 'loaded per session';
	my $node = gpuext_node("offload_$preload", preload => $preload,
		conf => [@conf, $preload ? ('gpuext.service_arena = 64MB') : ()]);
	my $built = $node->safe_psql('postgres', 'SELECT gpu_kernels FROM gpuext_info(open_device => false)') eq 't'
	  && device_mode() ne 'cpu';
	$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT i, ((i::int8 * 7919) % 100003 - 50000)::int AS x FROM generate_series(1, 100000) i;
ANALYZE t;
CREATE TABLE arr AS SELECT array_agg(((i::int8 * 7919) % 100003)::int) AS a FROM generate_series(1, 60000) i;
});

	# On: planned where there is device code; the device is opened by the first use.
	like(plans($node), $built ? qr/GpuSort.*GpuAgg/s : qr/Sort.*Aggregate/s, "$what, on: plans");
	is($node->safe_psql('postgres', "SET gpuext.device = auto; $checks SELECT device_state <> 'unopened' FROM gpuext_info(false)"),
		"t\nt", "$what, on: right answers, the device opened (or tried)");

	# A session from before the reload, with a generic plan made while offload was on.
	my $old = $node->background_psql('postgres', on_error_stop => 0);
	$old->query_safe(q{LOAD 'gpuext';
SET gpuext.device = auto;
SET plan_cache_mode = force_generic_plan;
PREPARE p AS SELECT sum(x) = (SELECT sum(v) FROM unnest((SELECT array_agg(x) FROM t)) v) AS ok, count(*) FROM t WHERE i > $1;
EXECUTE p(0)});
	my $old_plan = $old->query_safe('EXPLAIN (COSTS OFF) EXECUTE p(0)');
	like($old_plan, $built ? qr/GpuAgg/ : qr/Aggregate/, "$what: the old session's plan, made while on");

	my $requests = $node->safe_psql('postgres', 'SELECT coalesce(requests, 0) FROM gpuext_stat_service');
	set_offload($node, 'off');

	# Off: nothing planned, nothing opened, the CPU answers.
	unlike(plans($node), qr/Gpu/, "$what, off: neither GpuSort nor GpuAgg planned");
	is($node->safe_psql('postgres', "SET gpuext.device = auto; $checks SELECT device_state FROM gpuext_info()"),
		"t\nunopened", "$what, off: right answers on the CPU, no device opened (even by gpuext_info())");
	my ($out, $err) = psql2($node, "SET gpuext.device = gpu; SELECT gpu_sort('{3,1,2}'::int[])");
	like($err, qr/ERROR:  gpuext.device is "gpu" but no GPU can be used\nDETAIL:  Offload is turned off in the server's configuration \(gpuext.offload = off\)/,
		"$what, off: gpuext.device = gpu fails saying offload is off");
	is($node->safe_psql('postgres', "SET gpuext.device = gpu; SELECT array_agg(x) = (SELECT array_agg(x ORDER BY x) FROM t) FROM (SELECT x FROM t ORDER BY x) s"),
		't', "$what, off: ORDER BY under gpu is PostgreSQL's, right");

	# No session turns it back on.
	($out, $err) = psql2($node, "LOAD 'gpuext'; SET gpuext.offload = on");
	like($err, qr/parameter "gpuext.offload" cannot be changed now/, "$what, off: SET refused to a superuser");
	($out, $err) = psql2($node, "LOAD 'gpuext'; SELECT set_config('gpuext.offload', 'on', false)");
	like($err, qr/cannot be changed now/, "$what, off: set_config refused");
	my $state_after = "SELECT gpu_sort('{3,1,2}'::int[]); SHOW gpuext.offload; SELECT device_state FROM gpuext_info()";
	{
		local $ENV{PGOPTIONS} = '-c gpuext.offload=on -c gpuext.device=auto';
		($out, $err) = psql2($node, $state_after);
	}
	if ($preload)
	{
		like($err, qr/FATAL:  parameter "gpuext.offload" cannot be changed now/, "$what, off: a connection's option is refused");
	}
	else
	{
		is($out, "{1,2,3}\noff\nunopened", "$what, off: a connection's option is refused once the library loads");
		like($err, qr/WARNING:  gpuext.offload can only be set in the server's configuration/, '... with a WARNING');
	}
	($out, $err) = psql2($node, "SET gpuext.device = auto; SET gpuext.offload = on; $state_after");
	is($out, "{1,2,3}\noff\nunopened", "$what, off: nor does a SET made before the library loads");
	$node->safe_psql('postgres', 'CREATE ROLE regress_offload LOGIN');
	($out, $err) = psql2($node, "ALTER ROLE regress_offload SET gpuext.offload = on");
	if ($preload)
	{
		like($err, qr/parameter "gpuext.offload" cannot be changed now/, "$what, off: a role's setting is refused");
	}
	else
	{
		($out, $err) = psql2($node, "SET gpuext.device = auto; $state_after", extra_params => ['-U', 'regress_offload']);
		is($out, "{1,2,3}\noff\nunopened", "$what, off: a role's setting (stored before the library loads) is refused");
	}
	$node->safe_psql('postgres', 'DROP ROLE regress_offload');

	# The old session: its plan runs on the CPU, and under gpu fails saying why.
	my $seen = 0;
	for (1 .. 100)
	{
		$seen = 1, last if $old->query_safe('SHOW gpuext.offload') eq 'off';
		select(undef, undef, undef, 0.1);
	}
	ok($seen, "$what: the old session read the reload");
	is($old->query_safe('EXECUTE p(0)'), 't|100000', "$what: the old session's plan answers right");
	if ($built)
	{
		like($old->query_safe('EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE p(0)'),
			qr/GPU Fallback: gpuext.offload is off/, "$what: ... on the CPU");
		$old->query('SET gpuext.device = gpu; EXECUTE p(0)');
		like($old->{stderr}, qr/Offload is turned off/, "$what: the old session under gpu fails saying why");
	}
	is($node->safe_psql('postgres', 'SELECT coalesce(requests, 0) FROM gpuext_stat_service'), $requests,
		"$what, off: no request went to the GPU service");
	$old->quit;

	# On again.
	set_offload($node, 'on');
	like(plans($node), $built ? qr/GpuSort.*GpuAgg/s : qr/Sort.*Aggregate/s, "$what, on again: plans");
	is($node->safe_psql('postgres', "SET gpuext.device = auto; $checks SELECT device_state <> 'unopened' FROM gpuext_info(false)"),
		"t\nt", "$what, on again: right answers, the device opened (or tried)");

	next unless $preload;

	# Each client's share of the GPU service's pool.
	my $state = $node->safe_psql('postgres', 'SELECT state FROM gpuext_stat_service');
	if ($state ne 'running')
	{
		note("the GPU service is $state here: no share to check");
		$node->stop;
		next;
	}
	$node->append_conf('postgresql.conf', "gpuext.device_memory_limit = '64MB'\ngpuext.device_clients = 4");
	$node->reload;
	my $mb = 1024 * 1024;
	ok($node->poll_query_until('postgres', "SELECT max_device_bytes FROM gpuext_info()", 16 * $mb),
		'by default a client may hold 64MB / 4 device clients');
	# gpu_sort of 3M int8 (24MB and scratch); the ORDER BY that checks it stays PostgreSQL's
	my $big = q{SET gpuext.enable_sort = off; SELECT gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v)
FROM (SELECT array_agg(((i::int8 * 7919) % 1000003)::int8) AS a FROM generate_series(1, 3000000) i) s};
	($out, $err) = psql2($node, "SET gpuext.device = gpu; $big");
	like($err, qr/ERROR:  GPU memory allocation would pass this backend's share of the GPU service's pool/,
		'past its share, gpu fails saying so');
	($out, $err) = psql2($node, "SET gpuext.device = auto; $big; SELECT device_bytes FROM gpuext_info()");
	is($out, "t\n0", 'past its share, auto answers right on the CPU');
	is($err, '', '... quietly');
	$node->safe_psql('postgres', 'SELECT gpuext_stat_service_reset()');
	is($node->safe_psql('postgres', "SET gpuext.device = gpu; SET gpuext.max_device_memory = '60MB'; $big"), 't',
		"a superuser's gpuext.max_device_memory overrides the share");
	cmp_ok($node->safe_psql('postgres', 'SELECT max(memory_peak) FROM gpuext_devices'), '>', 16 * $mb,
		'... and the device held more than the share');
	$node->append_conf('postgresql.conf', "gpuext.device_clients = 2");
	$node->reload;
	ok($node->poll_query_until('postgres', "SELECT max_device_bytes FROM gpuext_info()", 32 * $mb),
		'a reload of gpuext.device_clients changes the share');
	$node->append_conf('postgresql.conf', "gpuext.device_memory_limit = '128MB'");
	$node->reload;
	ok($node->poll_query_until('postgres', "SELECT max_device_bytes FROM gpuext_info()", 64 * $mb),
		'so does one of gpuext.device_memory_limit');
	is($node->safe_psql('postgres', "SET gpuext.device = gpu; $big"), 't', 'within its share, gpu runs on the device');

	# A fast shutdown while sessions come and go through the service, each sorting on the device:
	# the service is stopped with requests in flight, whose backends must not wait for it.
	my $script = $node->basedir . '/connect.sql';
	open my $fh, '>', $script or die "cannot write $script: $!";
	print $fh "SELECT gpu_sort(array_agg(i)) IS NOT NULL FROM generate_series(1, 100000) i;\n";
	close $fh;
	my ($pout, $perr) = ('', '');
	my $bench = IPC::Run::start(['pgbench', '-n', '-C', '-c', 6, '-j', 6, '-T', 30, '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'], '>', \$pout, '2>', \$perr);
	sleep 2;
	my $t0 = time;
	my $stopped;
	{
		local $ENV{PGCTLTIMEOUT} = 20;
		$stopped = $node->stop('fast', fail_ok => 1);
	}
	my $secs = time - $t0;
	ok($stopped && $secs < 15, "a fast shutdown with requests in flight stops the server ($secs s)");
	$bench->finish;
	$node->stop('immediate') unless $stopped;
}
done_testing();
