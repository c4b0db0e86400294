# Leaks: 1,000 statements fail in GPU work under gpuext.device = gpu (failure injection at every
# call site and kind of device call, a lost device included), and 1,000 more fall back to the CPU
# under auto with the right result; afterwards the backend's device and pinned bytes are back at
# their starting values.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use GpuextNode;

my $node = gpuext_node('leaks', preload => 1,
	conf => ['gpuext.sort_min_rows = 0', 'gpuext.min_gpu_elements = 0']);
plan skip_all => 'no usable device: no device call can fail' unless device_ready($node);

$node->safe_psql('postgres', q{
CREATE TABLE v AS SELECT i, ((i::int8 * 7919) % 100003 - 50000)::int AS x FROM generate_series(1, 20000) i;
ANALYZE v;
CREATE TABLE ref AS SELECT array_agg(x) AS a, array_agg(x ORDER BY x) AS sorted, sum(x) AS s,
  md5(string_agg(x || ':' || i, ',' ORDER BY x DESC, i)) AS rows FROM v;
});

# Statements doing GPU work at every call site, each with its check against PostgreSQL's answer.
my @work = (
	'SELECT gpu_sort(a) = sorted FROM ref',
	q{SELECT gpu_sort(a, algorithm => 'bitonic') = sorted FROM ref},
	'SELECT gpu_sum(a) = s FROM ref',
	'SELECT gpu_sum(x) = s FROM v, ref GROUP BY s',
	'SELECT q.sum = s FROM gpu_query_agg($$SELECT x FROM v$$) q, ref',
	'SELECT (SELECT array_agg(z) FROM gpu_query_sort($$SELECT x FROM v$$) AS q(z int)) = sorted FROM ref',
	q{SELECT md5(string_agg(x || ':' || i, ',')) = (SELECT rows FROM ref) FROM (SELECT * FROM v ORDER BY x DESC, i) s},
	'SELECT array_agg(x) = (SELECT sorted FROM ref) FROM (SELECT x FROM v ORDER BY x) s',
);
my @kinds = ('alloc:1', 'copy:1', 'kernel:1', 'sync:1', 'sync:1:1', 'any:1', 'any:1:2', 'reset:1', 'reset:1:2');

# A script of n statements, each armed to fail in its device work.
sub failing_script
{
	my ($n) = @_;
	my $sql = '';
	for my $k (0 .. $n - 1)
	{
		$sql .= "SET gpuext.debug_fail_device_calls = '$kinds[$k % @kinds]';\n";
		$sql .= $work[ int($k / @kinds) % @work ] . ";\n";
	}
	return $sql;
}

# One session: a statement on the device (it leaves the pinned staging buffer, kept for reuse),
# the start values, 1,000 failures under gpu, 1,000 under auto, the same statement again, the end.
my $info = q{SELECT '%s:' || device_bytes || ',' || pinned_bytes FROM gpuext_info();};
my $sql = "SET client_min_messages = error;\n$work[0];\n" . sprintf($info, 'start') . "\n"
  . "SET gpuext.device = gpu;\n" . failing_script(1000) . sprintf($info, 'after_gpu') . "\n"
  . "SET gpuext.device = auto;\n" . failing_script(1000) . sprintf($info, 'after_auto') . "\n"
  . "SET gpuext.debug_fail_device_calls = '';\n$work[0];\n" . sprintf($info, 'end') . "\n"
  . "SELECT 'injected:' || injected_failures FROM gpuext_info();\n";
my ($out, $err);
$node->psql('postgres', $sql, stdout => \$out, stderr => \$err, on_error_stop => 0);
my %at = $out =~ /^(\w+):(\S+)$/mg;
my $errors = () = $err =~ /ERROR:  GPU [^\n]*injected failure/g;
my $other_errors = () = $err =~ /ERROR/g;
my $right = () = $out =~ /^t$/mg;
is($errors, 1000, '1,000 statements failed in GPU work under gpuext.device = gpu');
is($other_errors, 1000, 'no other ERROR (none under auto)');
is($right, 1002, '1,000 statements fell back to the CPU under auto with the right result (and 2 ran on the device)');
like($at{after_gpu}, qr/^0,/, 'no device memory held after the failures under gpu');
like($at{after_auto}, qr/^0,/, 'no device memory held after the fallbacks under auto');
is($at{end}, $at{start}, "device and pinned bytes back at their start ($at{start})");
cmp_ok($at{injected}, '>=', 2000, "device calls failed on purpose: $at{injected}");
diag("leak check: 2,000 statements with injected device failures ($at{injected} injected), "
	  . "device,pinned bytes $at{start} before, $at{end} after");
$node->stop;
done_testing();
