# Where no GPU can be used, nothing is planned for one and nothing keeps retrying: the GPU service
# that finds no device (here gpuext.devices names one that is not there) says so once, is started
# again only by a reload, and under gpuext.device = auto neither GpuSort nor GpuAgg is planned,
# while gpu says why; a backend without the service whose device cannot be opened plans neither.
# The service's own messages reach the server's log as the server's do: with log_line_prefix, and
# in csvlog and jsonlog.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my $node = gpuext_node('no_device', preload => 1,
	conf => ['gpuext.device = auto', 'gpuext.devices = 7', 'gpuext.sort_min_rows = 0', 'gpuext.agg_min_rows = 0',
		'logging_collector = on', "log_destination = 'stderr,csvlog,jsonlog'", "log_line_prefix = '%m [%p] %b: '",
		'gpuext.service_arena = 64MB']);
if ($node->safe_psql('postgres', 'SELECT gpu_kernels FROM gpuext_info(open_device => false)') ne 't')
{
	plan skip_all => 'a build without device code runs no GPU service';
}
$node->poll_query_until('postgres', "SELECT state = 'unavailable' FROM gpuext_stat_service")
  or die 'the GPU service never became "unavailable"';

$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT i, i % 100 AS g, (i * 7919) % 100003 AS x FROM generate_series(1, 50000) i;
ANALYZE t;
});

# Not started again and again: the same number of starts a few seconds later (it was 0.5 s, 1 s,
# 2 s ... up to every 30 s)
my $restarts = $node->safe_psql('postgres', 'SELECT restarts FROM gpuext_stat_service');
sleep 3;
is($node->safe_psql('postgres', 'SELECT restarts FROM gpuext_stat_service'), $restarts,
	'the service is not started again while no GPU can be used');

# Under auto, PostgreSQL's plans; under gpu, the reason
my $sort = $node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT x FROM t ORDER BY x');
my $agg = $node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT g, sum(x) FROM t GROUP BY g');
unlike($sort, qr/GpuSort/, 'no GpuSort under auto');
like($sort, qr/Sort/, "PostgreSQL's Sort under auto");
unlike($agg, qr/GpuAgg/, 'no GpuAgg under auto');
is($node->safe_psql('postgres', 'SELECT sum(x) FROM (SELECT x FROM t ORDER BY x) s'), '2499990467',
	'the query runs');
my ($rc, $out, $err) = $node->psql('postgres', q{SET gpuext.device = gpu; SELECT gpu_sort('{2,1}'::int[])});
like($err, qr/no GPU can be used.*\n.*DETAIL:.*gpuext\.devices names device 7/s, 'gpu says why');
like($node->safe_psql('postgres', 'SET gpuext.device = gpu; EXPLAIN (COSTS OFF) SELECT x FROM t ORDER BY x'),
	qr/GpuSort/, 'under gpu GpuSort is planned, to say why at run time');

# A reload starts it once more; it still finds none, and says nothing new
$node->reload;
$node->poll_query_until('postgres', "SELECT restarts > $restarts AND state = 'unavailable' FROM gpuext_stat_service")
  or die 'the reload did not start the service again';

# The log: one message for the whole time, the service's own lines with the server's prefix, in
# the csv and json logs too
my $logdir = $node->data_dir . '/log';
my %log = (log => '', csv => '', json => '');
opendir(my $dh, $logdir) or die "no log directory: $!";
foreach my $file (readdir($dh))
{
	$log{$1} .= slurp_file("$logdir/$file") if $file =~ /\.(log|csv|json)$/;
}
closedir($dh);
my @said = ($log{log} =~ /gpuext: no GPU can be used/g);
is(scalar(@said), 1, 'no GPU said once');
like($log{log}, qr/^\S+ \S+ \S+ \[\d+\] gpuext service supervisor: LOG:  gpuext service: gpuext\.devices names device 7, but \d+ are visible$/m,
	"the service's message carries log_line_prefix");
like($log{csv}, qr/"gpuext service: gpuext\.devices names device 7, but \d+ are visible"/,
	"the service's message in csvlog");
like($log{json}, qr/"message":"gpuext service: gpuext\.devices names device 7, but \d+ are visible"/,
	"the service's message in jsonlog");
$node->stop;

# With a device the service runs and the plans come back
$node->append_conf('postgresql.conf', "gpuext.devices = ''\n");
$node->start;
$node->poll_query_until('postgres', "SELECT state = 'running' FROM gpuext_stat_service")
  or die 'the GPU service did not start with a device';
like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT x FROM t ORDER BY x'), qr/GpuSort/,
	'GpuSort planned once a GPU can be used');
like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT g, sum(x) FROM t GROUP BY g'), qr/GpuAgg/,
	'GpuAgg planned once a GPU can be used');
$node->stop;

# Without the service: a backend whose device does not open plans neither
my $plain = gpuext_node('no_service', conf => ['gpuext.device = auto', "session_preload_libraries = 'gpuext'",
		'gpuext.sort_min_rows = 0', 'gpuext.agg_min_rows = 0']);
$plain->safe_psql('postgres', 'CREATE TABLE t AS SELECT i, i % 100 AS g FROM generate_series(1, 50000) i; ANALYZE t');
my $plans = $plain->safe_psql('postgres', q{
SET gpuext.debug_fail_device_calls = 'open:1';
EXPLAIN (COSTS OFF) SELECT i FROM t ORDER BY i;
EXPLAIN (COSTS OFF) SELECT g, sum(i) FROM t GROUP BY g;
});
unlike($plans, qr/Gpu(Sort|Agg)/, 'a backend whose device does not open plans neither');
like($plain->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT i FROM t ORDER BY i'), qr/GpuSort/,
	'a backend whose device opens plans GpuSort');
$plain->stop;

done_testing();
